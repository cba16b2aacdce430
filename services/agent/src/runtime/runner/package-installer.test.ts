import { checkRegistryPackages, InstallFailed, npmEnvironment } from './package-installer';

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

describe('npmEnvironment', () => {
  it("keeps what npm needs and none of the agent's secrets", () => {
    const env = npmEnvironment(
      {
        PATH: '/usr/bin',
        HOME: '/root',
        HTTPS_PROXY: 'http://proxy:3128',
        npm_config_registry: 'https://mirror.example/',
        INTERNAL_TOKEN: 'secret',
        AWS_SECRET_ACCESS_KEY: 'secret',
        SECRETS_KEY: 'secret',
      },
      '/etc/extra-ca.pem',
    );
    expect(env).toEqual({
      PATH: '/usr/bin',
      HOME: '/root',
      HTTPS_PROXY: 'http://proxy:3128',
      npm_config_registry: 'https://mirror.example/',
      NODE_EXTRA_CA_CERTS: '/etc/extra-ca.pem',
    });
  });
});
