import { LocalInvalidations } from '../cache/invalidations';
import { MemoryRateLimiter } from './memory-rate-limiter';

describe('MemoryRateLimiter', () => {
  it('admits exactly the limit within a window, then tells when to retry', async () => {
    let now = 1_000_000;
    const limiter = new MemoryRateLimiter(() => now);
    for (let i = 0; i < 3; i += 1) {
      const decision = await limiter.consume('k', 3, 60_000);
      expect(decision).toMatchObject({ allowed: true, remaining: 2 - i });
      now += 1000;
    }
    const denied = await limiter.consume('k', 3, 60_000);
    expect(denied.allowed).toBe(false);
    expect(denied.remaining).toBe(0);
    // The oldest request (t=1000s) leaves the window at 1060s; now is 1003s.
    expect(denied.retryAfter).toBe(57);
    expect(denied.resetAt).toBe(Math.ceil((1_002_000 + 60_000) / 1000));
  });

  it('slides: a request is admitted again once the oldest leaves the window', async () => {
    let now = 0;
    const limiter = new MemoryRateLimiter(() => now);
    await limiter.consume('k', 1, 1000);
    now = 999;
    expect((await limiter.consume('k', 1, 1000)).allowed).toBe(false);
    now = 1001;
    expect((await limiter.consume('k', 1, 1000)).allowed).toBe(true);
  });

  it('keeps separate budgets per key', async () => {
    const limiter = new MemoryRateLimiter(() => 5);
    await limiter.consume('a', 1, 1000);
    expect((await limiter.consume('b', 1, 1000)).allowed).toBe(true);
  });

  it('counts a guarded request only while the stamp reads as expected', async () => {
    const invalidations = new LocalInvalidations();
    const limiter = new MemoryRateLimiter(() => 5, invalidations);
    const first = await limiter.consumeIfStamped('k', 2, 1000, { key: 's', expected: null });
    expect(first).toMatchObject({ stamp: null, decision: { allowed: true, remaining: 1 } });
    await invalidations.bump(['s']);
    const stale = await limiter.consumeIfStamped('k', 2, 1000, { key: 's', expected: null });
    expect(stale.decision).toBeUndefined();
    expect(stale.stamp).toEqual(expect.any(String));
    const fresh = await limiter.consumeIfStamped('k', 2, 1000, {
      key: 's',
      expected: stale.stamp!,
    });
    expect(fresh.decision).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('reads every stamp as unknown without stamps of its own, counting nothing', async () => {
    const limiter = new MemoryRateLimiter(() => 5);
    expect(await limiter.consumeIfStamped('k', 1, 1000, { key: 's', expected: null })).toEqual({
      stamp: undefined,
    });
    expect((await limiter.consume('k', 1, 1000)).allowed).toBe(true);
  });
});
