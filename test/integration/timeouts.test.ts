import { call, createAccount } from '../support/api';
import { slowRuntime } from '../support/slow-runtime';
import {
  MANUAL_SWEEPS,
  onGvisor,
  sessionContainers,
  startStack,
  type TestStack,
} from '../support/stack';

let stack: TestStack;
/** The gateway's timeout for session operations: a cold create on gVisor takes over a second. */
const OP_TIMEOUT_MS = onGvisor ? 2500 : 800;
/** The real Docker runtime, made slow on demand: an agent whose host is overloaded. */
const { slowness, runtime, poolFull } = slowRuntime();

beforeAll(async () => {
  stack = await startStack({
    gatewayEnv: { SESSION_OP_TIMEOUT_MS: String(OP_TIMEOUT_MS), ...MANUAL_SWEEPS },
    runtime,
  });
});

afterAll(async () => {
  await stack?.stop();
});

it('answers 408 when the node is slower than the session-operation timeout, and leaves nothing behind', async () => {
  const account = await createAccount(stack, 'free');
  slowness.delayMs = OP_TIMEOUT_MS + 1200;
  const started = Date.now();
  const created = await call(`${stack.url}/v1/sessions/create`, {
    method: 'POST',
    key: account.key,
    body: {},
  });
  expect(created.status).toBe(408);
  expect(created.body).toMatchObject({ error: { code: 'request_timeout' } });
  expect(Date.now() - started).toBeLessThan(slowness.delayMs);

  // The session is not listed. The sweeper finds nothing to remove yet (the node is still
  // busy); when the node finishes, it sees the caller gave up and removes what it made.
  const list = await call<{ data: unknown[] }>(`${stack.url}/v1/sessions`, { key: account.key });
  expect(list.body.data).toEqual([]);
  await stack.gateways[0]!.sweeper.sweep();
  // Gone once the node is done (its delay, then its own work: slower on gVisor).
  let left = await sessionContainers(stack.nodeId);
  for (const deadline = Date.now() + 10_000; left.length > 0 && Date.now() < deadline;) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    left = await sessionContainers(stack.nodeId);
  }
  expect(left).toHaveLength(0);

  slowness.delayMs = 0;
  // From the pool, as a create on a node that is not overloaded: a cold start may itself take
  // longer than this test's short timeout on a busy machine (a flaky 408 in a CI run).
  await poolFull();
  const fine = await call(`${stack.url}/v1/sessions/create`, {
    method: 'POST',
    key: account.key,
    body: {},
  });
  expect(fine.status).toBe(200);
});
