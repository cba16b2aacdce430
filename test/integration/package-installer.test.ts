import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import {
  createServer as createTcpServer,
  type AddressInfo,
  type Server as TcpServer,
} from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import { useStackWithAccount } from '../support/use-stack';

/**
 * Automatic installs run npm in a throwaway installer container whose only way out is the
 * agent's proxy to the configured registry (ADR 29). Here the registry is a local one, and
 * every other address a package names is a local listener that must never hear from it.
 */

const docker = new Docker();
const INSTALLER_NETWORK = 'sandbox-installer';

interface FakePackage {
  version: string;
  dependencies?: Record<string, string>;
  main: string;
}

/** A registry of a few packages on 127.0.0.1; `hold` keeps one packument back until `until` (to look at the install). */
class FakeRegistry {
  readonly requests: string[] = [];
  private server: Server | undefined;
  private readonly tarballs = new Map<string, Buffer>();
  private readonly dir = mkdtempSync(join(tmpdir(), 'fake-registry-'));
  url = '';
  hold: { name: string; until: Promise<void> } | undefined;

  constructor(private readonly packages: Record<string, FakePackage>) {
    for (const [name, pkg] of Object.entries(packages)) {
      const root = join(this.dir, name, 'package');
      mkdirSync(root, { recursive: true });
      const { main, ...rest } = pkg;
      writeFileSync(
        join(root, 'package.json'),
        JSON.stringify({ name, ...rest, main: 'index.js' }),
      );
      writeFileSync(join(root, 'index.js'), main);
      execFileSync('tar', [
        '-czf',
        join(this.dir, `${name}.tgz`),
        '-C',
        join(this.dir, name),
        'package',
      ]);
      this.tarballs.set(name, readFileSync(join(this.dir, `${name}.tgz`)));
    }
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      this.requests.push(req.url ?? '');
      const path = decodeURIComponent(req.url ?? '/').slice(1);
      const tarball = /^(.+)\/-\/.+\.tgz$/.exec(path)?.[1];
      if (tarball !== undefined && this.tarballs.has(tarball)) {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.end(this.tarballs.get(tarball));
        return;
      }
      const pkg = this.packages[path];
      if (pkg === undefined) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
        return;
      }
      const { main: _main, ...rest } = pkg;
      const data = this.tarballs.get(path) ?? Buffer.alloc(0);
      const body = JSON.stringify({
        name: path,
        'dist-tags': { latest: pkg.version },
        versions: {
          [pkg.version]: {
            name: path,
            ...rest,
            main: 'index.js',
            dist: {
              tarball: `${this.url}${path}/-/${path}-${pkg.version}.tgz`,
              shasum: createHash('sha1').update(data).digest('hex'),
            },
          },
        },
      });
      const answer = () => res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      if (this.hold?.name === path) void this.hold.until.then(answer);
      else answer();
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server?.address() as AddressInfo).port}/`;
  }

  stop(): void {
    this.server?.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A TCP listener that counts the connections it gets. */
class Listener {
  connections = 0;
  private server: TcpServer | undefined;
  port = 0;

  constructor(readonly host: string) {}

  async start(): Promise<void> {
    this.server = createTcpServer((socket) => {
      this.connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => this.server?.listen(0, this.host, resolve));
    this.port = (this.server?.address() as AddressInfo).port;
  }

  stop(): void {
    this.server?.close();
  }
}

const loopback = new Listener('127.0.0.1');
const listeners: Listener[] = [loopback];
let gatewayListener: Listener | undefined;

const registry = new FakeRegistry({
  'fake-ok': { version: '1.0.0', main: "module.exports = 'ok from the registry';" },
  'fake-slow': { version: '1.2.3', main: "module.exports = 'slow';" },
  get 'fake-tarball-dep'() {
    return {
      version: '1.0.0',
      dependencies: { stolen: `http://127.0.0.1:${loopback.port}/stolen.tgz` },
      main: "module.exports = 'never';",
    };
  },
  get 'fake-host-dep'() {
    const port = gatewayListener?.port ?? 9;
    const host = gatewayListener?.host ?? '127.0.0.1';
    return {
      version: '1.0.0',
      dependencies: { stolen: `https://${host}:${port}/stolen.tgz` },
      main: "module.exports = 'never';",
    };
  },
  get 'fake-git-dep'() {
    return {
      version: '1.0.0',
      dependencies: { stolen: `git+http://127.0.0.1:${loopback.port}/stolen.git` },
      main: "module.exports = 'never';",
    };
  },
});

/** A port nothing listens on now (one just given up). */
async function freePort(): Promise<number> {
  const probe = new Listener('127.0.0.1');
  await probe.start();
  probe.stop();
  return probe.port;
}

/** The rule an agent killed outright would leave: its proxy gone, its port open to installers. */
const deadNode = `dead-${process.pid}`;
const installerRules = () =>
  execFileSync('iptables', ['-w', '-S', 'SANDBOX-INSTALLER'], { encoding: 'utf8' });

beforeAll(async () => {
  await registry.start();
  await loopback.start();
  try {
    execFileSync('iptables', ['-w', '-N', 'SANDBOX-INSTALLER'], { stdio: 'ignore' });
  } catch {
    // there already
  }
  // Before the agent's first install sets the firewall up (an address of TEST-NET-1, which
  // nothing on this host has).
  const port = await freePort();
  execFileSync('iptables', [
    '-w',
    '-I',
    'SANDBOX-INSTALLER',
    '-d',
    '192.0.2.1/32',
    '-p',
    'tcp',
    '--dport',
    String(port),
    '-m',
    'comment',
    '--comment',
    `installer-proxy:${deadNode}`,
    '-j',
    'ACCEPT',
  ]);
});

const t = useStackWithAccount('paid', {
  session: true,
  stack: {
    agentEnv: {
      // Read when the stack starts, after the registry did.
      get NPM_REGISTRY() {
        return registry.url;
      },
    },
  },
});

afterAll(() => {
  for (const line of installerRules().split('\n')) {
    if (!line.includes(`installer-proxy:${deadNode}"`)) continue;
    const words = line.replace(/"/g, '').split(/\s+/).slice(1);
    execFileSync('iptables', ['-w', '-D', ...words], { stdio: 'ignore' });
  }
  registry.stop();
  for (const listener of listeners) listener.stop();
});

const code = (source: string) =>
  t.api.execute<{ stdout: string; stderr: string; exitCode: number }>(t.sessionId, {
    code: source,
    timeout: 60,
  });

describe('package installs in an installer container', () => {
  it('installs from the configured registry, in a container with no host path and no way out', async () => {
    let release: () => void = () => undefined;
    registry.hold = { name: 'fake-slow', until: new Promise((resolve) => (release = resolve)) };
    const run = code("import slow from 'fake-slow';\nconsole.log(slow);");
    // While the registry holds the answer, the installer is there to look at (a code run's
    // start takes seconds at 0.25 CPU on gVisor).
    try {
      let installers: Docker.ContainerInfo[] = [];
      for (let i = 0; i < 600 && installers.length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        installers = await docker.listContainers({
          filters: { label: [`io.sandbox.installer=${t.stack.nodeId}`] },
        });
      }
      expect(installers).toHaveLength(1);
      const info = await docker.getContainer(installers[0]?.Id ?? '').inspect();
      expect(info.Config.User).toBe('1000:1000');
      expect(info.HostConfig.CapDrop).toEqual(['ALL']);
      expect(info.HostConfig.CapAdd ?? []).toEqual([]);
      expect(Object.keys(info.NetworkSettings.Networks)).toEqual([INSTALLER_NETWORK]);
      expect(info.Mounts.filter((m) => m.Type !== 'volume').map((m) => m.Destination)).toEqual(
        process.env.NODE_EXTRA_CA_CERTS ? ['/etc/sandbox/extra-ca-certificates.pem'] : [],
      );
      expect(info.Mounts.every((m) => m.Type === 'volume' || m.RW === false)).toBe(true);
      expect(info.Mounts.some((m) => m.Destination === '/workspace')).toBe(false);
      const environment = info.Config.Env.join('\n');
      for (const secret of ['INTERNAL_TOKEN', 'DATABASE_URL', t.stack.internalToken]) {
        expect(environment).not.toContain(secret);
      }
      const network = await docker.getNetwork(INSTALLER_NETWORK).inspect();
      expect(network.Internal).toBe(true);
    } finally {
      release();
    }
    const done = await run;
    expect(done.body).toMatchObject({ exitCode: 0, stdout: 'slow\n' });
    expect(registry.requests).toContain('/fake-slow');
    // The installer is gone with its install.
    const left = await docker.listContainers({
      all: true,
      filters: { label: [`io.sandbox.installer=${t.stack.nodeId}`] },
    });
    expect(left).toHaveLength(0);
  });

  it('installs a package of the registry with its dependencies', async () => {
    const run = await code("import ok from 'fake-ok';\nconsole.log(ok);");
    expect(run.body).toMatchObject({ exitCode: 0, stdout: 'ok from the registry\n' });
  });
});

describe('package installs: what the installer cannot reach', () => {
  it('refuses a dependency that names an http(s) tarball elsewhere: nothing reaches it', async () => {
    const network = await docker.getNetwork(INSTALLER_NETWORK).inspect();
    const gateway = (network.IPAM?.Config ?? [])[0]?.Gateway ?? '';
    expect(gateway).not.toBe('');
    gatewayListener = new Listener(gateway);
    listeners.push(gatewayListener);
    await gatewayListener.start();
    for (const name of ['fake-tarball-dep', 'fake-host-dep']) {
      const run = await code(`import x from '${name}';\nconsole.log(x);`);
      expect(run.body.exitCode).not.toBe(0);
      expect(run.body.stdout).toBe('');
      expect(run.body.stderr).toContain(`Installing ${name}@latest failed`);
      expect(run.body.stderr).toMatch(/403|only the package registry/);
    }
    expect(loopback.connections).toBe(0);
    expect(gatewayListener.connections).toBe(0);
  });

  it("lets the installer network reach the agent's proxy, and nothing else of the host", async () => {
    const network = await docker.getNetwork(INSTALLER_NETWORK).inspect();
    const gateway = (network.IPAM?.Config ?? [])[0]?.Gateway ?? '';
    const listing = installerRules();
    // The rule of a proxy gone was removed when this agent set its own up.
    expect(listing).not.toContain(`installer-proxy:${deadNode}"`);
    const rule = listing
      .split('\n')
      .find((line) => line.includes(`installer-proxy:${t.stack.nodeId}"`));
    const proxyPort = /--dport (\d+)/.exec(rule ?? '')?.[1];
    expect(proxyPort).toBeDefined();
    // On a port no agent's rule opens (an agent of another test may be starting).
    let host = new Listener(gateway);
    listeners.push(host);
    await host.start();
    while (installerRules().includes(`--dport ${host.port} `)) {
      host = new Listener(gateway);
      listeners.push(host);
      await host.start();
    }
    // A container of the installer's shape, on its network, tries both.
    const probe = await docker.createContainer({
      Image: t.stack.agentConfig.sandboxImage,
      User: '1000:1000',
      Cmd: [
        'sh',
        '-c',
        `curl -s -o /dev/null -w '%{http_code}\n' -x http://${gateway}:${proxyPort} http://127.0.0.1:${loopback.port}/; ` +
          `curl -s -m 3 http://${gateway}:${host.port}/ >/dev/null; echo "host: curl exit $?"`,
      ],
      HostConfig: { NetworkMode: INSTALLER_NETWORK, CapDrop: ['ALL'] },
    });
    try {
      await probe.start();
      await probe.wait();
      const logs = (await probe.logs({ stdout: true, stderr: true })).toString('utf8');
      expect(logs).toContain('403');
      // 7: the connection was refused (an empty reply from a listener would be 52).
      expect(logs).toContain('host: curl exit 7');
    } finally {
      await probe.remove({ force: true });
    }
    expect(host.connections).toBe(0);
    expect(loopback.connections).toBe(0);
  });

  it('refuses a git dependency: nothing reaches its address', async () => {
    const run = await code("import x from 'fake-git-dep';\nconsole.log(x);");
    expect(run.body.exitCode).not.toBe(0);
    expect(run.body.stderr).toContain('Installing fake-git-dep@latest failed');
    expect(loopback.connections).toBe(0);
  });
});
