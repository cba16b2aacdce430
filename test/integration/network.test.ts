import { createServer, type Server } from 'node:net';
import { networkInterfaces } from 'node:os';
import Docker from 'dockerode';
import { applyEgressFirewall, hostNameservers } from '@sandbox/agent';
import {
  FORBIDDEN_ADDRESSES,
  FORBIDDEN_PORT,
  PRIVATE_ADDRESS,
  probe,
  probeForbidden,
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
    for (const address of FORBIDDEN_ADDRESSES) {
      expect([address, (await execute(id, probeForbidden(address))).stdout]).toEqual([
        address,
        'blocked\n',
      ]);
    }
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

  it('holds while an agent applies the policy again (an agent restarted beside running sandboxes)', async () => {
    const id = await session();
    const network = await new Docker().getNetwork(t.stack.agentConfig.sandboxNetwork).inspect();
    const bridge =
      (network.Options as Record<string, string>)['com.docker.network.bridge.name'] ??
      `br-${network.Id.slice(0, 12)}`;
    const gateway = (network.IPAM?.Config ?? [])[0]?.Gateway as string;
    // The sandbox knocks on this host and on a private address, again and again, for 6 s
    // while the policy is applied 5 times: no knock may ever get through.
    const knocking = execute(
      id,
      `end=$((SECONDS + 6)); n=0; while [ $SECONDS -lt $end ]; do n=$((n + 1)); ` +
        `curl -s --max-time 0.3 http://${gateway}:${hostPort}/; ` +
        `curl -s --max-time 0.3 http://${PRIVATE_ADDRESS}:${FORBIDDEN_PORT}/; done; echo " knocks $n"`,
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    const dnsServers = await hostNameservers();
    for (let i = 0; i < 5; i++) {
      await applyEgressFirewall({ bridge, dnsServers, allow: t.stack.agentConfig.egressAllow });
    }
    const { stdout } = await knocking;
    expect(stdout).not.toContain('reached');
    expect(Number(/knocks (\d+)/.exec(stdout)?.[1])).toBeGreaterThan(3);
  });

  it('still reaches the npm registry', async () => {
    const id = await session();
    const result = await execute(id, 'cd /tmp && npm view is-number version');
    expect(result.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});
