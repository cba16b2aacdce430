import type { RunningGateway } from '@sandbox/gateway';
import { call } from '../support/api';
import { startCutOffGateway } from '../support/stack';
import { useStack } from '../support/use-stack';

/**
 * The gateway's probes (issue 12): /healthz says the process serves; /readyz says whether
 * its dependencies answer, within a second each, naming the one that does not.
 */
const t = useStack();
let noRedis: RunningGateway | undefined;

afterAll(async () => {
  await noRedis?.stop();
});

it('is ready when Postgres and Redis answer', async () => {
  const ready = await call(`${t.stack.url}/readyz`);
  expect([ready.status, ready.body]).toEqual([
    200,
    { status: 'ready', checks: { postgres: 'ok', redis: 'ok' } },
  ]);
  expect((await call(`${t.stack.url}/healthz`)).status).toBe(200);
});

it('says not ready, soon and without detail, when Redis is out of reach', async () => {
  noRedis = await startCutOffGateway(t.stack, { redis: false });
  const started = Date.now();
  const answer = await call(`${noRedis.url}/readyz`);
  expect(Date.now() - started).toBeLessThan(3000);
  expect([answer.status, answer.body]).toEqual([
    503,
    { status: 'not_ready', checks: { postgres: 'ok', redis: 'unavailable' } },
  ]);
  // Alive all the same: a restart would not bring Redis back.
  expect((await call(`${noRedis.url}/healthz`)).status).toBe(200);
});
