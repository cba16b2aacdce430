import { availableParallelism } from 'node:os';
import { createAccount, type TestAccount } from '../support/api';
import {
  docker,
  MANUAL_SWEEPS,
  sessionContainer,
  sessionContainerNow,
  sessionCpuLimit,
} from '../support/stack';
import { useStack } from '../support/use-stack';

// The sweeper is driven by hand below, so its own timer stays out of the way.
const t = useStack({ gatewayEnv: MANUAL_SWEEPS });
let free: TestAccount;
let paid: TestAccount;

beforeAll(async () => {
  free = await createAccount(t.stack, 'free');
  paid = await createAccount(t.stack, 'paid');
});

const create = (key: string, body: unknown, headers?: Record<string, string>) =>
  t.as(key).post('/v1/sessions/create', body, headers);

describe('session creation rules', () => {
  it('rejects a ttl above the maximum with field, value and max', async () => {
    const absolute = await create(paid.key, { ttl: 604_801 });
    expect(absolute.status).toBe(400);
    expect(absolute.body).toMatchObject({
      error: { code: 'invalid_request', details: { field: 'ttl', value: 604_801, max: 604_800 } },
    });
    const overPlan = await create(free.key, { ttl: 86_401 });
    expect(overPlan.status).toBe(400);
    expect(overPlan.body).toMatchObject({
      error: { details: { field: 'ttl', value: 86_401, max: 86_400 } },
    });
    for (const ttl of [0, -5, 1.5, '60']) {
      expect((await create(free.key, { ttl })).status).toBe(400);
    }
  });

  it('applies a given ttl to expiresAt', async () => {
    const created = await create(paid.key, { ttl: 3600 });
    expect(created.status).toBe(200);
    const { expiresAt, createdAt } = created.body as { expiresAt: string; createdAt: string };
    expect(Math.abs(Date.parse(expiresAt) - Date.parse(createdAt) - 3_600_000)).toBeLessThan(2000);
  });

  it('returns metadata unchanged and refuses more than 16 KB', async () => {
    const metadata = { user: 'u1', nested: { list: [1, 'two', null], flag: true }, emoji: '✓' };
    const created = await create(free.key, { metadata });
    const id = (created.body as { sessionId: string }).sessionId;
    const info = await t.as(free.key).session(id);
    expect(info.body.metadata).toEqual(metadata);
    const big = await create(free.key, { metadata: { blob: 'x'.repeat(16 * 1024) } });
    expect(big.status).toBe(400);
    expect(big.body).toMatchObject({
      error: { code: 'invalid_request', details: { field: 'metadata' } },
    });
    expect((await create(free.key, { metadata: [1, 2] })).status).toBe(400);
  });

  it('accepts resourceLimits on paid plans only, within bounds, and applies them', async () => {
    const denied = await create(free.key, { resourceLimits: { memory: 512 } });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({
      error: { code: 'forbidden', details: { field: 'resourceLimits' } },
    });
    const created = await create(paid.key, {
      resourceLimits: { memory: 2048, cpu: 0.5, timeout: 120 },
    });
    expect(created.status).toBe(200);
    const session = created.body as { sessionId: string; resourceLimits: unknown };
    expect(session.resourceLimits).toEqual({ memory: 2048, cpu: 0.5, timeout: 120, disk: 1024 });
    const container = await sessionContainer(session.sessionId);
    const info = await docker.getContainer(container?.Id as string).inspect();
    expect(info.HostConfig.Memory).toBe(2048 * 1024 * 1024);
    expect(await sessionCpuLimit(info)).toBe(0.5);

    expect((await create(paid.key, { resourceLimits: { memory: 8192 } })).status).toBe(400);
    expect((await create(paid.key, { resourceLimits: { timeout: 301 } })).status).toBe(400);
    const disk = await create(paid.key, { resourceLimits: { disk: 2048 } });
    expect(disk.status).toBe(400);
    expect(disk.body).toMatchObject({ error: { details: { field: 'resourceLimits.disk' } } });
    // More CPU than the node has is a bad request, not a 503 that no retry could cure.
    const cores = availableParallelism();
    if (cores < 8) {
      const count = async () =>
        (await t.as(paid.key).get<{ pagination: { total: number } }>('/v1/sessions')).body
          .pagination.total;
      const before = await count();
      const cpu = await create(paid.key, { resourceLimits: { cpu: cores + 1 } });
      expect(cpu.status).toBe(400);
      expect(cpu.body).toMatchObject({
        error: { code: 'invalid_request', details: { field: 'resourceLimits.cpu', max: cores } },
      });
      expect(await count()).toBe(before);
    }
  });
});

describe('concurrent-session limit', () => {
  it('answers 429 session_limit_exceeded past the plan limit, and frees a slot on delete', async () => {
    const small = await createAccount(t.stack, 'enterprise', {
      limits: { maxConcurrentSessions: 2 },
    });
    const results = await Promise.all([1, 2, 3, 4].map(() => create(small.key, {})));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 429, 429]);
    const rejected = results.find((r) => r.status === 429);
    expect(rejected?.body).toMatchObject({
      error: { code: 'session_limit_exceeded', details: { limit: 2 } },
    });
    const first = results.find((r) => r.status === 200)?.body as { sessionId: string };
    await t.as(small.key).deleteSession(first.sessionId);
    expect((await create(small.key, {})).status).toBe(200);
  });
});

interface Listing {
  data: { sessionId: string }[];
  pagination: unknown;
}

describe('listing', () => {
  it('lists the account’s sessions newest first with pagination', async () => {
    const lister = await createAccount(t.stack, 'paid');
    const api = t.as(lister.key);
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      ids.push(
        ((await create(lister.key, { metadata: { i } })).body as { sessionId: string }).sessionId,
      );
    }
    const page = await api.get<Listing>('/v1/sessions?limit=2&offset=0');
    expect(page.status).toBe(200);
    expect(page.body.data.map((s) => s.sessionId)).toEqual([ids[2], ids[1]]);
    expect(page.body.pagination).toEqual({ total: 3, limit: 2, offset: 0, hasMore: true });
    const rest = await api.get<Listing>('/v1/sessions?limit=2&offset=2');
    expect(rest.body.data.map((s) => s.sessionId)).toEqual([ids[0]]);
    expect(rest.body.pagination).toEqual({ total: 3, limit: 2, offset: 2, hasMore: false });
    expect((await api.get('/v1/sessions?limit=101')).status).toBe(400);
  });
});

describe('TTL expiry', () => {
  it('removes an expired session’s container and answers 404 afterwards', async () => {
    const created = await create(free.key, { ttl: 1 });
    const id = (created.body as { sessionId: string }).sessionId;
    await new Promise((resolve) => setTimeout(resolve, 1500));
    // Past expiresAt the session is gone for the API even before the sweep.
    const before = await t.as(free.key).session(id);
    expect(before.status).toBe(404);
    const { expired, destroyed } = await t.stack.gateways[0]!.sweeper.sweep();
    expect(expired).toContain(id);
    expect(destroyed).toContain(id);
    expect(await sessionContainerNow(id)).toBeUndefined();
    const run = await t.as(free.key).execute(id, { command: 'true' });
    expect(run.body).toMatchObject({ error: { code: 'session_not_found' } });
  });
});

describe('deletion under a run', () => {
  it('answers a run whose session was deleted meanwhile with 404 session_not_found', async () => {
    const session = await create(paid.key, {});
    const sessionId = (session.body as { sessionId: string }).sessionId;
    const run = t.as(paid.key).execute(sessionId, { command: 'sleep 20' });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const deleted = await t.as(paid.key).deleteSession(sessionId);
    expect(deleted.status).toBe(200);
    const answer = await run;
    expect(answer.status).toBe(404);
    expect(answer.body).toMatchObject({ error: { code: 'session_not_found' } });
  });
});
