import { call, createAccount } from '../support/api';
import {
  DocumentedResponses,
  everyOperation,
  type OpenApiDoc,
} from '../support/openapi-conformance';
import {
  OP_TIMEOUT_MS,
  openApiHelpers,
  type OpenApiContext,
} from '../support/openapi-cases/context';
import { fileCases } from '../support/openapi-cases/file-cases';
import { resourceCases, webhookCases } from '../support/openapi-cases/resource-cases';
import { runCases } from '../support/openapi-cases/run-cases';
import { deleteSessionCases, sessionCases } from '../support/openapi-cases/session-cases';
import { slowRuntime } from '../support/slow-runtime';
import { startCutOffGateway, startStack } from '../support/stack';

/**
 * Every route and every documented response, checked against the served OpenAPI document: each
 * response's body must match the documented schema for its status, and every documented
 * (operation, status) pair must be produced by some request here. The cases, one module per
 * topic, are in test/support/openapi-cases/; they share one stack, started here.
 */

/** The real Docker runtime, made slow on demand: an agent whose host is overloaded. */
const { slowness, runtime, poolFull } = slowRuntime();
const t = { slowness, poolFull } as OpenApiContext;
const { expectDocumented, v1 } = openApiHelpers(t);

beforeAll(async () => {
  t.stack = await startStack({
    gatewayEnv: {
      SESSION_OP_TIMEOUT_MS: String(OP_TIMEOUT_MS),
      BODY_LIMIT_MB: '1',
      PROCESS_STDIN_WAIT_MS: '500',
    },
    runtime,
  });
  t.noAgent = await startCutOffGateway(t.stack, { redis: true });
  t.noRedis = await startCutOffGateway(t.stack, { redis: false });
  const served = await call<OpenApiDoc>(`${t.stack.url}/v1/openapi.json`);
  expect(served.status).toBe(200);
  t.documented = new DocumentedResponses(served.body);
  t.doc = served.body;
  t.account = await createAccount(t.stack, 'free');
  // Operations time out after 3 s here: the first create must not be a cold one.
  await poolFull();
});

afterAll(async () => {
  await t.noAgent?.stop();
  await t.noRedis?.stop();
  await t.stack?.stop();
});

describe('the OpenAPI document', () => {
  it('is OpenAPI 3.1 and every schema in it compiles', () => {
    expect(t.doc.openapi).toBe('3.1.0');
    t.documented.compileAll();
  });

  it('lists exactly the routes that exist', async () => {
    for (const [path, methods] of Object.entries(t.doc.paths)) {
      if (path === '/openapi.json') continue;
      for (const method of Object.keys(methods)) {
        const concrete = path.replace('{sessionId}', `ses_${'0'.repeat(24)}`);
        const response = await call(v1(concrete), { method: method.toUpperCase() });
        expect([method, path, response.status]).toEqual([method, path, 401]);
      }
    }
    const undocumented = await call(v1('/sessions/create'), { method: 'PUT', key: t.account.key });
    expect(undocumented.status).toBe(404);
  });
});

describe('every operation answers as documented', () => {
  const cases = [
    ...sessionCases,
    ...runCases,
    ...resourceCases,
    ...fileCases,
    ...deleteSessionCases,
    ...webhookCases,
  ];
  for (const register of cases) register(t);

  it('rate limits every operation', async () => {
    const limited = await createAccount(t.stack, 'enterprise', {
      limits: { requestsPerMinute: 1 },
    });
    const attempts = everyOperation(t.stack.url, limited.key);
    await attempts[1]![2](); // uses the one request of the minute
    for (const [method, path, attempt] of attempts) {
      const response = await attempt();
      expect(response.status).toBe(429);
      expectDocumented(method, path, response);
    }
  });

  // Each request waits out the Redis client's retries (about 4.5 s): all at once.
  it('answers every operation with 503 while Redis is out of reach', async () => {
    const answers = await Promise.all(
      everyOperation(t.noRedis.url, t.account.key).map(async ([method, path, attempt]) => ({
        method,
        path,
        response: await attempt(),
      })),
    );
    for (const { method, path, response } of answers) {
      expect([method, path, response.status]).toEqual([method, path, 503]);
      expectDocumented(method, path, response);
    }
  });

  it('left no documented response unexercised (but 500)', () => {
    expect(t.documented.unseen()).toEqual([]);
  });
});
