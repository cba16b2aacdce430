import { installerSpec, type InstallerSettings } from './installer-container';
import {
  applyInstallerFirewall,
  listeningSockets,
  listensOn,
  proxyRule,
  staleRules,
} from './installer-firewall';
import { checkRegistryPackages, InstallFailed } from './package-installer';
import { connectTarget, isRegistry, targetOf } from './registry-proxy';

describe('checkRegistryPackages', () => {
  it.each([
    ['lodash', 'latest'],
    ['@types/node', '^20.1.0'],
    ['is-number', '7.0.0'],
    ['react', '>=18 <19 || 17.x'],
    ['left-pad', '~1.3.0'],
    ['next', 'canary'],
    ['pkg', '1.0.0-rc.1+build.5'],
  ])('accepts %s@%s from the registry', (name, spec) => {
    expect(() => checkRegistryPackages([{ name, spec }])).not.toThrow();
  });

  it.each([
    ['x', 'http://169.254.169.254/latest/meta-data'],
    ['x', 'https://example.com/x.tgz'],
    ['x', 'git+ssh://git@github.com/a/b.git'],
    ['x', 'github:user/repo'],
    ['x', 'user/repo'],
    ['x', 'file:../../etc'],
    ['x', '..'],
    ['x', './local'],
    ['x', 'npm:other@1'],
    ['x', ''],
    ['x', '1.0.0\n--registry=http://evil'],
    ['../x', 'latest'],
    ['x y', 'latest'],
    ['--registry=http://evil', 'latest'],
  ])('refuses %s@%s', (name, spec) => {
    expect(() => checkRegistryPackages([{ name, spec }])).toThrow(InstallFailed);
  });
});

const settings: InstallerSettings = {
  image: 'sandbox-runtime:latest',
  network: 'sandbox-installer',
  registry: new URL('https://registry.npmjs.org/'),
  cacheVolume: 'io.sandbox-npm-cache-node-1',
  cacheVolumeLabels: { 'io.sandbox.node': 'node-1' },
  label: { key: 'io.sandbox.installer', value: 'node-1' },
  extraCaCertsPath: '/var/lib/sandbox-agent/extra-ca.pem',
  firewall: true,
  nodeId: 'node-1',
};

describe('installerSpec', () => {
  const spec = installerSpec(settings, 'http://172.19.0.1:41234', ['is-number@7.0.0']);
  const host = spec.HostConfig ?? {};

  it('mounts no workspace and no host path but the CA bundle, read-only; the cache is a volume', () => {
    expect(host.Binds).toEqual([
      '/var/lib/sandbox-agent/extra-ca.pem:/etc/sandbox/extra-ca-certificates.pem:ro',
    ]);
    expect(host.Mounts).toEqual([
      { Type: 'volume', Source: 'io.sandbox-npm-cache-node-1', Target: '/home/sandbox' },
    ]);
  });

  it("runs as the sandbox user with no capability, none of the agent's environment", () => {
    expect(spec.User).toBe('1000:1000');
    expect(host.CapDrop).toEqual(['ALL']);
    expect(host.CapAdd).toBeUndefined();
    expect(host.SecurityOpt).toEqual(['no-new-privileges:true']);
    expect(host.ReadonlyRootfs).toBe(true);
    expect(spec.Env?.map((e) => e.split('=')[0]).sort()).toEqual([
      'HOME',
      'NODE_EXTRA_CA_CERTS',
      'npm_config_https_proxy',
      'npm_config_noproxy',
      'npm_config_proxy',
      'npm_config_registry',
      'npm_config_update_notifier',
    ]);
  });

  it('is on the installer network, with the proxy as its way out, and runs no install script', () => {
    expect(host.NetworkMode).toBe('sandbox-installer');
    expect(spec.Env).toContain('npm_config_https_proxy=http://172.19.0.1:41234');
    expect(spec.Cmd?.[2]).toContain('--ignore-scripts');
    expect(spec.Cmd?.[2]).toContain('--git=/bin/false');
    expect(spec.Cmd?.slice(3)).toEqual(['install', 'is-number@7.0.0']);
  });
});

describe('the registry proxy', () => {
  const registry = new URL('https://registry.npmjs.org/');

  it('lets through the registry host and port only', () => {
    expect(isRegistry(registry, { host: 'registry.npmjs.org', port: 443 })).toBe(true);
    for (const other of [
      { host: 'registry.npmjs.org', port: 80 },
      { host: 'registry.npmjs.org.evil.example', port: 443 },
      { host: '104.16.0.35', port: 443 },
      { host: '127.0.0.1', port: 443 },
      { host: '169.254.169.254', port: 80 },
    ]) {
      expect(isRegistry(registry, other)).toBe(false);
    }
    const local = new URL('http://127.0.0.1:4873/');
    expect(isRegistry(local, targetOf(new URL('http://127.0.0.1:4873/is-number')))).toBe(true);
    expect(isRegistry(local, targetOf(new URL('http://127.0.0.1:4874/x.tgz')))).toBe(false);
  });

  it('reads CONNECT authorities, and refuses malformed ones', () => {
    expect(connectTarget('registry.npmjs.org:443')).toEqual({
      host: 'registry.npmjs.org',
      port: 443,
    });
    expect(connectTarget('[::1]:443')).toEqual({ host: '::1', port: 443 });
    expect(connectTarget('REGISTRY.npmjs.org:443')?.host).toBe('registry.npmjs.org');
    for (const bad of ['registry.npmjs.org', 'a:0', 'a:70000', 'user@host:443', 'a b:443', '']) {
      expect(connectTarget(bad)).toBeUndefined();
    }
  });
});

describe('the installer firewall: proxy rules left by earlier proxies', () => {
  it("finds a node's earlier proxy rule, and no other node's", () => {
    const listing = [
      '-N SANDBOX-INSTALLER',
      '-A SANDBOX-INSTALLER -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT',
      '-A SANDBOX-INSTALLER -d 172.19.0.1/32 -p tcp -m tcp --dport 41234 -m comment --comment "installer-proxy:node-1" -j ACCEPT',
      '-A SANDBOX-INSTALLER -d 172.19.0.1/32 -p tcp -m tcp --dport 41999 -m comment --comment "installer-proxy:node-10" -j ACCEPT',
      '-A SANDBOX-INSTALLER -j REJECT --reject-with icmp-admin-prohibited',
    ].join('\n');
    expect(staleRules(listing, 'SANDBOX-INSTALLER', 'node-1')).toEqual([
      [
        '-D',
        'SANDBOX-INSTALLER',
        '-d',
        '172.19.0.1/32',
        '-p',
        'tcp',
        '-m',
        'tcp',
        '--dport',
        '41234',
        '-m',
        'comment',
        '--comment',
        'installer-proxy:node-1',
        '-j',
        'ACCEPT',
      ],
    ]);
  });

  it("finds the rules of proxies gone: another node's rule whose port nothing listens on", () => {
    const rule = (port: number, node: string) =>
      `-A SANDBOX-INSTALLER -d 172.19.0.1/32 -p tcp -m tcp --dport ${port} -m comment --comment "installer-proxy:${node}" -j ACCEPT`;
    const listing = [
      '-A SANDBOX-INSTALLER -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT',
      rule(41234, 'node-1'),
      rule(41999, 'node-2'),
      rule(42000, 'node-3'),
      rule(42001, 'node-4'),
      '-A SANDBOX-INSTALLER -j REJECT --reject-with icmp-admin-prohibited',
    ].join('\n');
    // node-2 listens on the gateway, node-4 on every address (through tcp6's ::); node-3 is gone.
    const sockets = listeningSockets([
      [
        '  sl  local_address rem_address   st',
        '   0: 010013AC:A40F 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0 0 1 1',
        '   1: 010013AC:A410 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0 0 2 1',
      ].join('\n'),
      [
        '  sl  local_address                         remote_address                        st',
        '   0: 00000000000000000000000000000000:A411 00000000000000000000000000000000:0000 0A 0',
      ].join('\n'),
    ]);
    expect([...sockets].sort()).toEqual(['172.19.0.1:41999', ':::42001'].sort());
    const stale = staleRules(listing, 'SANDBOX-INSTALLER', 'node-1', listensOn(sockets));
    expect(stale.map((words) => words[words.indexOf('--comment') + 1])).toEqual([
      'installer-proxy:node-1',
      'installer-proxy:node-3',
    ]);
  });
});

describe('the installer firewall: the order of its rules', () => {
  it('puts replies first, the proxy next, and refuses the rest', async () => {
    const calls: string[][] = [];
    await applyInstallerFirewall(
      { bridge: 'br-inst', gateway: '172.19.0.1', port: 41234, nodeId: 'node-1' },
      (args) => {
        calls.push(args);
        if (args[0] === '-C') return Promise.reject(new Error('absent'));
        return Promise.resolve({ stdout: '' });
      },
      () => true,
    );
    const added = calls.filter((c) => c[0] === '-I' || c[0] === '-A').map((c) => c.join(' '));
    expect(added).toEqual([
      '-I SANDBOX-INSTALLER 1 -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT',
      `-I SANDBOX-INSTALLER 2 ${proxyRule({ bridge: 'br-inst', gateway: '172.19.0.1', port: 41234, nodeId: 'node-1' }).join(' ')}`,
      '-A SANDBOX-INSTALLER -j REJECT --reject-with icmp-admin-prohibited',
      '-I INPUT 1 -i br-inst -j SANDBOX-INSTALLER',
    ]);
  });
});
