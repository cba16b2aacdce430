import { Redis } from 'ioredis';
import { RedisRateLimiter } from '@sandbox/gateway';
import { requiredEnv } from '../support/env';

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
