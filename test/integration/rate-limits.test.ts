import { Redis } from 'ioredis';
import { RedisRateLimiter } from '@sandbox/gateway';
import { call, createAccount } from '../support/api';
import { requiredEnv } from '../support/env';
import { useStack } from '../support/use-stack';

describe('RedisRateLimiter against a real Redis', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(requiredEnv('TEST_REDIS_URL'));
  });
  afterAll(async () => {
    await redis.quit();
  });

  it('admits exactly the budget out of 200 concurrent requests', async () => {
    const limiter = new RedisRateLimiter(redis, `test:${Date.now()}:`);
    const decisions = await Promise.all(
      Array.from({ length: 200 }, () => limiter.consume('k', 100, 60_000)),
    );
    expect(decisions.filter((d) => d.allowed)).toHaveLength(100);
    const denied = decisions.find((d) => !d.allowed);
    expect(denied?.remaining).toBe(0);
    expect(denied?.retryAfter).toBeGreaterThan(0);
    expect(denied?.retryAfter).toBeLessThanOrEqual(60);
  });

  it('slides: the budget comes back when the window has passed', async () => {
    const limiter = new RedisRateLimiter(redis, `test:${Date.now()}:slide:`);
    expect((await limiter.consume('k', 2, 300)).allowed).toBe(true);
    expect((await limiter.consume('k', 2, 300)).allowed).toBe(true);
    expect((await limiter.consume('k', 2, 300)).allowed).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 350));
    expect((await limiter.consume('k', 2, 300)).allowed).toBe(true);
  });
});

describe('rate limits across two gateway replicas', () => {
  const t = useStack({ replicas: 2 });

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
});
