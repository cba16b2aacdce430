import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import { networkInterfaces } from 'node:os';
import { promisify } from 'node:util';
import { sessionContainer } from '../support/stack';
import { useStackWithAccount } from '../support/use-stack';

/**
 * What a sandbox can reach. Every forbidden address is a real listener on this machine: a
 * network namespace behind a veth pair holds a private address and the metadata address, so
 * no packet of this test ever leaves the machine.
 */

const run = promisify(execFile);
const tag = randomBytes(3).toString('hex');
const ns = `sbxt-${tag}`;
const hostSide = `vh${tag}`;
const nsSide = `vn${tag}`;
const PRIVATE_ADDRESS = '10.199.77.2';
const METADATA_ADDRESS = '169.254.169.254';
const PORT = 18080;

let listener: ChildProcess;
let hostServer: Server;
let hostPort: number;

async function ip(...args: string[]): Promise<void> {
  await run('ip', args);
}

const session = () => t.api.createSession();

async function execute(
  sessionId: string,
  command: string,
): Promise<{ stdout: string; exitCode: number }> {
  const response = await t.api.execute<{ stdout: string; exitCode: number }>(sessionId, {
    command,
    timeout: 30,
  });
  return response.body;
}

/** `reached` when a TCP connection to host:port gets the listener's greeting. */
const probe = (host: string, port: number) =>
  `curl -s --max-time 3 http://${host}:${port}/ || echo blocked`;

beforeAll(async () => {
  await ip('netns', 'add', ns);
  await ip('link', 'add', hostSide, 'type', 'veth', 'peer', 'name', nsSide);
  await ip('link', 'set', nsSide, 'netns', ns);
  await ip('addr', 'add', '10.199.77.1/24', 'dev', hostSide);
  await ip('link', 'set', hostSide, 'up');
  await ip('netns', 'exec', ns, 'ip', 'addr', 'add', `${PRIVATE_ADDRESS}/24`, 'dev', nsSide);
  await ip('netns', 'exec', ns, 'ip', 'addr', 'add', `${METADATA_ADDRESS}/32`, 'dev', nsSide);
  await ip('netns', 'exec', ns, 'ip', 'link', 'set', nsSide, 'up');
  await ip('netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up');
  await ip('netns', 'exec', ns, 'ip', 'route', 'add', 'default', 'via', '10.199.77.1');
  await ip('route', 'add', `${METADATA_ADDRESS}/32`, 'via', PRIVATE_ADDRESS);
  listener = spawn('ip', [
    'netns',
    'exec',
    ns,
    process.execPath,
    '-e',
    `require('http').createServer((q, s) => s.end('reached')).listen(${PORT}, '0.0.0.0')`,
  ]);
  hostServer = createServer((socket) => socket.end('HTTP/1.0 200 OK\r\n\r\nreached'));
  await new Promise<void>((resolve) => hostServer.listen(0, '0.0.0.0', resolve));
  hostPort = (hostServer.address() as { port: number }).port;
  // The listeners answer from this machine (so a "blocked" below means the sandbox is refused).
  for (const address of [PRIVATE_ADDRESS, METADATA_ADDRESS]) {
    for (let i = 0; i < 50; i += 1) {
      const { stdout } = await run('sh', ['-c', probe(address, PORT)]);
      if (stdout === 'reached') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect((await run('sh', ['-c', probe(address, PORT)])).stdout).toBe('reached');
  }
});

// Started once the forbidden listeners answer; stopped before they are taken down.
const t = useStackWithAccount('paid');

afterAll(async () => {
  listener?.kill();
  hostServer?.close();
  await ip('route', 'del', `${METADATA_ADDRESS}/32`).catch(() => undefined);
  await ip('link', 'del', hostSide).catch(() => undefined);
  await ip('netns', 'del', ns).catch(() => undefined);
});

describe('sandbox networking', () => {
  it('cannot reach a private address or the metadata address', async () => {
    const id = await session();
    expect((await execute(id, probe(PRIVATE_ADDRESS, PORT))).stdout).toBe('blocked\n');
    expect((await execute(id, probe(METADATA_ADDRESS, PORT))).stdout).toBe('blocked\n');
  });

  it('cannot reach any service of this host, on any of its addresses', async () => {
    const id = await session();
    const addresses = Object.values(networkInterfaces())
      .flat()
      .filter((a) => a !== undefined && a.family === 'IPv4')
      .map((a) => a.address);
    expect(addresses.length).toBeGreaterThan(1);
    for (const address of addresses) {
      expect([address, (await execute(id, probe(address, hostPort))).stdout]).toEqual([
        address,
        'blocked\n',
      ]);
    }
  });

  it('cannot reach another session', async () => {
    const target = await session();
    await execute(
      target,
      `nohup node -e "require('http').createServer((q, s) => s.end('reached')).listen(8000)" >/dev/null 2>&1 & for i in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/8000) 2>/dev/null && break; sleep 0.1; done`,
    );
    expect((await execute(target, probe('127.0.0.1', 8000))).stdout).toBe('reached');
    const container = await sessionContainer(target);
    const address = Object.values(container!.NetworkSettings.Networks)[0]!.IPAddress;
    const attacker = await session();
    expect((await execute(attacker, probe(address, 8000))).stdout).toBe('blocked\n');
  });

  it('still reaches the npm registry', async () => {
    const id = await session();
    const result = await execute(id, 'cd /tmp && npm view is-number version');
    expect(result.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});
