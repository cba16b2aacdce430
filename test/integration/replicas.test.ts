import { ApiClient } from '../support/api-client';
import { call, createAccount } from '../support/api';
import { MANUAL_SWEEPS } from '../support/stack';
import { useStack } from '../support/use-stack';

// Two gateway replicas sharing Postgres and Redis. Idle after 1 s: the node refuses to pause
// a session it served a request of within the idle delay, whatever a replica's record says.
const t = useStack({ replicas: 2, gatewayEnv: { ...MANUAL_SWEEPS, SESSION_IDLE_AFTER_S: '1' } });

/** A new account's session, made and run once on replica A; the API on both replicas. */
async function servedByA() {
  const key = (await createAccount(t.stack, 'free')).key;
  const [a, b] = t.stack.gateways.map((g) => new ApiClient(g, key)) as [ApiClient, ApiClient];
  const sessionId = await a.createSession();
  expect((await a.execute(sessionId, { command: 'true' })).status).toBe(200);
  return { a, b, sessionId };
}

describe('two gateway replicas: one rate budget, sweeps, keys and plans', () => {
  it('shares one budget per key: exactly 100 of 200 concurrent requests pass, the rest get 429', async () => {
    const { key } = await createAccount(t.stack, 'free');
    const responses = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        call(`${t.stack.urls[i % 2]}/v1/sessions?limit=1`, { key }),
      ),
    );
    expect(responses.filter((r) => r.status === 200)).toHaveLength(100);
    const limited = responses.filter((r) => r.status === 429);
    expect(limited).toHaveLength(100);
    const sample = limited[0]!;
    expect(sample.body).toMatchObject({
      error: { code: 'rate_limit_exceeded', retryAfter: expect.any(Number) as number },
    });
    expect(Number(sample.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(sample.headers.get('x-ratelimit-remaining')).toBe('0');
  });

  it('sweeps expired sessions on both replicas at once without doing any twice', async () => {
    const api = t.as((await createAccount(t.stack, 'free')).key);
    const ids: string[] = [];
    for (let i = 0; i < 6; i += 1) ids.push(await api.createSession({ ttl: 1 }));
    await new Promise((resolve) => setTimeout(resolve, 1200));
    const [a, b] = await Promise.all(t.stack.gateways.map((g) => g.sweeper.sweep()));
    const expired = [...a!.expired, ...b!.expired].filter((id) => ids.includes(id));
    const destroyed = [...a!.destroyed, ...b!.destroyed].filter((id) => ids.includes(id));
    expect(expired.sort()).toEqual([...ids].sort());
    expect(destroyed.sort()).toEqual([...ids].sort());
  });

  it('revokes a key on every replica at once', async () => {
    const account = await createAccount(t.stack, 'free');
    for (const url of t.stack.urls) {
      expect((await call(`${url}/v1/sessions`, { key: account.key })).status).toBe(200);
    }
    await call(`${t.stack.urls[1]}/admin/v1/keys/${account.keyId}/revoke`, {
      method: 'POST',
      key: t.stack.adminToken,
    });
    for (const url of t.stack.urls) {
      expect((await call(`${url}/v1/sessions`, { key: account.key })).status).toBe(401);
    }
  });

  it('applies a plan change on every replica at once', async () => {
    const account = await createAccount(t.stack, 'free');
    const limitAt = async (url: string) =>
      (await call(`${url}/v1/sessions?limit=1`, { key: account.key })).headers.get(
        'x-ratelimit-limit',
      );
    // Both replicas have read the key (and keep it) on the free plan.
    const freeLimit = await limitAt(t.stack.urls[0]!);
    expect(await limitAt(t.stack.urls[1]!)).toBe(freeLimit);
    const changed = await call(`${t.stack.urls[1]}/admin/v1/accounts/${account.accountId}`, {
      method: 'PATCH',
      key: t.stack.adminToken,
      body: { plan: 'paid' },
    });
    expect(changed.status).toBe(200);
    const paidLimit = await limitAt(t.stack.urls[0]!);
    expect(paidLimit).not.toBe(freeLimit);
    expect(await limitAt(t.stack.urls[1]!)).toBe(paidLimit);
  });
});

describe('two gateway replicas: one session, whichever replica serves it', () => {
  it('ends a session on every replica at once when one replica deletes it', async () => {
    // Replica A has read the session (and keeps it) before replica B deletes it.
    const { a, b, sessionId } = await servedByA();
    expect((await a.execute(sessionId, { command: 'true' })).status).toBe(200);
    expect((await b.deleteSession(sessionId)).status).toBe(200);
    const after = await a.execute(sessionId, { command: 'true' });
    expect(after.status).toBe(404);
    expect(after.body).toMatchObject({ error: { code: 'session_not_found' } });
  });

  it("never answers another account's request from a session a replica holds in memory", async () => {
    const owner = (await createAccount(t.stack, 'free')).key;
    const stranger = (await createAccount(t.stack, 'free')).key;
    const a = new ApiClient(t.stack.gateways[0]!, owner);
    const sessionId = await a.createSession();
    expect((await a.execute(sessionId, { command: 'true' })).status).toBe(200);
    expect((await a.execute(sessionId, { command: 'true' })).status).toBe(200);
    const theirs = new ApiClient(t.stack.gateways[0]!, stranger);
    const refused = await theirs.execute(sessionId, { command: 'echo hi' });
    expect(refused.status).toBe(404);
    expect(refused.body).toMatchObject({ error: { code: 'session_not_found' } });
    expect((await theirs.readFile(sessionId, 'x.txt')).status).toBe(404);
  });

  it("wakes a session on one replica that another replica's sweep put to idle", async () => {
    const { a, b, sessionId } = await servedByA();
    // Unused for longer than the idle delay (replica A writes that run's activity within a
    // second): replica B's next sweep pauses it.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const { idled } = await t.stack.gateways[1]!.sweeper.sweep();
    expect(idled).toContain(sessionId);
    expect((await b.session(sessionId)).body).toMatchObject({ state: 'idle' });
    // Replica A still holds the record it read while the session was active.
    const woken = await a.execute(sessionId, { command: 'echo awake' });
    expect(woken.status).toBe(200);
    expect(woken.body).toMatchObject({ stdout: 'awake\n' });
    expect((await b.session(sessionId)).body).toMatchObject({ state: 'active' });
  });

  it('writes the activity a replica kept in memory within a second or so', async () => {
    const { a, b, sessionId } = await servedByA();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const before = Date.now();
    expect((await a.execute(sessionId, { command: 'true' })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const { lastActive } = (await b.session<{ lastActive: string }>(sessionId)).body;
    expect(Date.parse(lastActive)).toBeGreaterThanOrEqual(before - 50);
  });

  it("records a run's event for an endpoint another replica registered just before", async () => {
    // Replica A learns that the account has no endpoint, and keeps that.
    const { a, b, sessionId } = await servedByA();
    expect((await a.execute(sessionId, { command: 'true' })).status).toBe(200);
    const created = await b.post<{ id: string }>('/v1/webhooks', {
      url: 'http://127.0.0.1:9/hook',
      events: ['execution.completed'],
    });
    expect(created.status).toBe(201);
    expect((await a.execute(sessionId, { command: 'exit 3' })).status).toBe(200);
    // Recorded just after the answer.
    const recorded = async () => {
      const { rows } = await t.stack.gateways[0]!.db.query<{ payload: string }>(
        `SELECT payload FROM webhook_deliveries
          WHERE endpoint_id = $1 AND event_type = 'execution.completed'`,
        [created.body.id],
      );
      return rows.map((row) => JSON.parse(row.payload) as { data: Record<string, unknown> });
    };
    const until = Date.now() + 3000;
    while ((await recorded()).length === 0 && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const events = await recorded();
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toMatchObject({ sessionId, exitCode: 3 });
  });
});
