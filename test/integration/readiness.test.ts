import { loadGatewayConfig } from '@sandbox/config';
import { startGateway, type RunningGateway } from '@sandbox/gateway';
import { call } from '../support/api';
import { requiredEnv } from '../support/env';
import { closedPort } from '../support/net';
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
  noRedis = await startGateway({
    config: loadGatewayConfig({
      GATEWAY_PORT: '0',
      DATABASE_URL: requiredEnv('TEST_DATABASE_URL'),
      REDIS_URL: `redis://127.0.0.1:${await closedPort()}`,
      AGENT_NODES: `gone=127.0.0.1:${await closedPort()}`,
    }),
    logger: t.stack.logger,
    schema: t.stack.schema,
  });
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
