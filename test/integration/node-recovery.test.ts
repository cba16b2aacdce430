import { createAccountAt } from '../support/api';
import { ApiClient } from '../support/api-client';
import { startFleet, type TestFleet } from '../support/fleet';

/**
 * A node seen down answers for its sessions (503 at once), and serves them again at the next
 * request once it is back, without waiting for a heartbeat: heartbeats are a minute apart
 * here, a node is down after 300 ms of silence. A create is placed the same way.
 */
let fleet: TestFleet;
let api: ApiClient;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  fleet = await startFleet({
    nodes: 1,
    replicas: 1,
    gatewayEnv: { NODE_HEARTBEAT_MS: '60000', NODE_DOWN_AFTER_MS: '300' },
  });
  // The node announced itself; the gateway reads the registry and asks it now.
  const health = () => fleet.gateways[0]!.fleet.agents.live(fleet.nodes[0]!.nodeId)?.health;
  for (const deadline = Date.now() + 30_000; health() !== 'up' && Date.now() < deadline;) {
    await fleet.tick();
    await sleep(100);
  }
  expect(health()).toBe('up');
  api = new ApiClient(fleet, (await createAccountAt(fleet, 'paid')).key);
}, 60_000);

afterAll(async () => {
  await fleet?.stop();
});

it('answers 503 for a node seen down, and serves at once when it is back', async () => {
  const [node] = fleet.nodes;
  // Its last heartbeat is older than NODE_DOWN_AFTER_MS by now: the create asks it again.
  await sleep(400);
  const id = await api.createSession();
  await api.writeFile(id, 'kept.txt', 'kept');

  await node!.stop();
  await sleep(400);
  await fleet.tick();
  expect(fleet.gateways[0]!.fleet.agents.live(node!.nodeId)?.health).toBe('down');
  const started = Date.now();
  const during = await api.execute(id, { command: 'cat kept.txt' });
  expect(during.status).toBe(503);
  expect(Number(during.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(Date.now() - started).toBeLessThan(3000);

  await node!.start();
  // No heartbeat since: the request itself finds the node back.
  const after = await api.execute<{ stdout: string }>(id, { command: 'cat kept.txt' });
  expect(after.status).toBe(200);
  expect(after.body.stdout).toBe('kept');
  // A create too: placement asks a node seen down once more before it answers 503.
  await node!.stop();
  await sleep(400);
  await fleet.tick();
  expect((await api.post('/v1/sessions/create', {})).status).toBe(503);
  await node!.start();
  const another = await api.createSession();
  await api.deleteSession(another);
  await api.deleteSession(id);
});
