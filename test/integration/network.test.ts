import { createServer, type Server } from 'node:net';
import { networkInterfaces } from 'node:os';
import {
  FORBIDDEN_PORT,
  METADATA_ADDRESS,
  PRIVATE_ADDRESS,
  probe,
  useForbiddenListeners,
} from '../support/forbidden-listeners';
import { sessionContainer } from '../support/stack';
import { useStackWithAccount } from '../support/use-stack';

/** What a sandbox can reach. Every forbidden address is a real listener on this machine. */

let hostServer: Server;
let hostPort: number;

useForbiddenListeners();

beforeAll(async () => {
  hostServer = createServer((socket) => socket.end('HTTP/1.0 200 OK\r\n\r\nreached'));
  await new Promise<void>((resolve) => hostServer.listen(0, '0.0.0.0', resolve));
  hostPort = (hostServer.address() as { port: number }).port;
});

// Started once the forbidden listeners answer; stopped before they are taken down.
const t = useStackWithAccount('paid');

afterAll(() => {
  hostServer?.close();
});

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

describe('sandbox networking', () => {
  it('cannot reach a private address or the metadata address', async () => {
    const id = await session();
    expect((await execute(id, probe(PRIVATE_ADDRESS, FORBIDDEN_PORT))).stdout).toBe('blocked\n');
    expect((await execute(id, probe(METADATA_ADDRESS, FORBIDDEN_PORT))).stdout).toBe('blocked\n');
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
