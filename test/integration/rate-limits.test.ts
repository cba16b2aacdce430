import { Redis } from 'ioredis';
import { RedisInvalidations, RedisRateLimiter } from '@sandbox/gateway';
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

  it('counts a guarded request only while its stamp reads as expected, atomically', async () => {
    const prefix = `test:${Date.now()}:guard:`;
    const limiter = new RedisRateLimiter(redis, `${prefix}rl:`, `${prefix}stamp:`);
    const guard = { key: 'principals', expected: null };
    // Unset stamp: counted, 100 of 200 at once as with consume.
    const first = await Promise.all(
      Array.from({ length: 200 }, () => limiter.consumeIfStamped('k', 100, 60_000, guard)),
    );
    expect(first.every((r) => r.stamp === null)).toBe(true);
    expect(first.filter((r) => r.decision?.allowed)).toHaveLength(100);
    // A bump: nothing counted, and the stamp now set comes back.
    await redis.set(`${prefix}stamp:principals`, 'bumped');
    const stale = await limiter.consumeIfStamped('j', 5, 60_000, guard);
    expect(stale).toEqual({ stamp: 'bumped' });
    const fresh = await limiter.consumeIfStamped('j', 5, 60_000, {
      key: 'principals',
      expected: 'bumped',
    });
    expect(fresh).toMatchObject({ stamp: 'bumped', decision: { allowed: true, remaining: 4 } });
  });

  it('reads the stamp as unknown, counting nothing, while Redis is out of reach', async () => {
    const down = new Redis('redis://127.0.0.1:1', { lazyConnect: true, maxRetriesPerRequest: 0 });
    const limiter = new RedisRateLimiter(down);
    expect(
      await limiter.consumeIfStamped('k', 1, 60_000, { key: 'principals', expected: null }),
    ).toEqual({ stamp: undefined });
    down.disconnect();
  });
});

describe("the gateway's auto-pipelining Redis connection", () => {
  it('on an auto-pipelining connection, sends at once one at a time and gathers when busy', async () => {
    // As the gateway opens its connection (gateway-parts.ts).
    const pipelined = new Redis(requiredEnv('TEST_REDIS_URL'), { enableAutoPipelining: true });
    /** Replies awaited, and commands gathered for the next write. */
    const queues = (): number[] => [pipelined.commandQueue.length, pipelined.autoPipelineQueueSize];
    try {
      await pipelined.ping();
      const prefix = `test:${Date.now()}:soon:`;
      const limiter = new RedisRateLimiter(pipelined, `${prefix}rl:`, `${prefix}stamp:`);
      const stamps = new RedisInvalidations(pipelined, `${prefix}stamp:`);
      // The first is gathered (nothing known yet), and was alone: the next go at once.
      const first = limiter.consume('k', 10, 60_000);
      expect(queues()).toEqual([0, 1]);
      await first;
      const alone = limiter.consume('k', 10, 60_000);
      expect(queues()).toEqual([1, 0]);
      await alone;
      const read = stamps.stamps(['a', 'b']);
      expect(queues()).toEqual([1, 0]);
      expect(await read).toEqual([null, null]);
      // Busy: the first goes, the rest are gathered for one write, and all are answered.
      const together = Array.from({ length: 20 }, () => limiter.consume('k', 10, 60_000));
      expect(queues()).toEqual([1, 19]);
      const guarded = limiter.consumeIfStamped('k', 10, 60_000, { key: 'a', expected: null });
      expect(pipelined.autoPipelineQueueSize).toBe(20);
      const decisions = await Promise.all(together);
      expect(decisions.filter((d) => d.allowed)).toHaveLength(8);
      expect(await guarded).toMatchObject({ stamp: null, decision: { allowed: false } });
      // After a crowd, an idle moment does not split the next batch: gathered, until alone.
      const after = stamps.stamps(['a']);
      expect(queues()).toEqual([0, 1]);
      await after;
      const again = stamps.stamps(['a']);
      expect(queues()).toEqual([1, 0]);
      await again;
      expect(pipelined.options.enableAutoPipelining).toBe(true);
    } finally {
      await pipelined.quit();
    }
  });
});
