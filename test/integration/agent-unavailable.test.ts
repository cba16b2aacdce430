import { loadGatewayConfig } from '@sandbox/config';
import { startGateway, type RunningGateway } from '@sandbox/gateway';
import { createLogger } from '@sandbox/logger';
import { call, createAccountAt } from '../support/api';
import { requiredEnv } from '../support/env';
import { closedPort } from '../support/net';

let gateway: RunningGateway;
const schema = `t_noagent_${Date.now()}`;
const adminToken = 'admin-token-for-this-test';

/** A gateway alone in `schema`, whose only agent node is a port nothing listens on. */
async function startLoneGateway(
  schema: string,
  env: Record<string, string>,
): Promise<RunningGateway> {
  return startGateway({
    config: loadGatewayConfig({
      GATEWAY_PORT: '0',
      DATABASE_URL: requiredEnv('TEST_DATABASE_URL'),
      REDIS_URL: requiredEnv('TEST_REDIS_URL'),
      AGENT_NODES: `gone=127.0.0.1:${await closedPort()}`,
      ADMIN_TOKEN: adminToken,
      ...env,
    }),
    logger: createLogger({ name: 'test', level: 'silent' }),
    schema,
  });
}

beforeAll(async () => {
  gateway = await startLoneGateway(schema, { SESSION_OP_TIMEOUT_MS: '2000' });
});

/** A key of a new free account on the gateway at `url`. */
async function freeKey(url: string): Promise<string> {
  return (await createAccountAt({ url, adminToken }, 'free')).key;
}

afterAll(async () => {
  await gateway?.db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await gateway?.stop();
});

it('answers 503 service_unavailable with Retry-After when no agent can serve, leaving nothing behind', async () => {
  const key = await freeKey(gateway.url);
  const started = Date.now();
  const created = await call(`${gateway.url}/v1/sessions/create`, {
    method: 'POST',
    key,
    body: {},
  });
  expect(created.status).toBe(503);
  expect(created.body).toMatchObject({ error: { code: 'service_unavailable' } });
  expect(Number(created.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(Date.now() - started).toBeLessThan(5000);
  const list = await call<{ data: unknown[] }>(`${gateway.url}/v1/sessions`, { key });
  expect(list.body.data).toEqual([]);
});

it('answers 503 service_unavailable with Retry-After while Redis is out of reach, not 500', async () => {
  const redisDown = `t_noredis_${Date.now()}`;
  const other = await startLoneGateway(redisDown, {
    REDIS_URL: `redis://127.0.0.1:${await closedPort()}`,
  });
  try {
    const key = await freeKey(other.url);
    const listed = await call(`${other.url}/v1/sessions`, { key });
    expect(listed.status).toBe(503);
    expect(listed.body).toMatchObject({ error: { code: 'service_unavailable', retryAfter: 1 } });
    expect(listed.headers.get('retry-after')).toBe('1');
  } finally {
    await other.db.query(`DROP SCHEMA IF EXISTS "${redisDown}" CASCADE`);
    await other.stop();
  }
});
