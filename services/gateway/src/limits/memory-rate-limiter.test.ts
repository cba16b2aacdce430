import { LocalInvalidations } from '../cache/invalidations';
import { IDLE_SWEEP_MS, MemoryRateLimiter } from './memory-rate-limiter';
import { decide } from './rate-limiter';

/** The window as a plain list, filtered whole at each request: what the log must agree with. */
function naiveLimiter() {
  const logs = new Map<string, number[]>();
  return (key: string, limit: number, windowMs: number, nowMs: number) => {
    const times = (logs.get(key) ?? []).filter((t) => t > nowMs - windowMs);
    const allowed = times.length < limit;
    if (allowed) times.push(nowMs);
    logs.set(key, times);
    return decide(
      allowed,
      limit,
      times.length,
      times[0] ?? nowMs,
      times.at(-1) ?? nowMs,
      nowMs,
      windowMs,
    );
  };
}

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

describe('MemoryRateLimiter over many requests', () => {
  it('decides as a whole-window filter would, over thousands of requests in bursts and gaps', async () => {
    let now = 1_000_000;
    const limiter = new MemoryRateLimiter(() => now);
    const naive = naiveLimiter();
    let seed = 42;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    let admitted = 0;
    for (let i = 0; i < 20_000; i += 1) {
      // Bursts of requests in the same millisecond, steady traffic, and gaps past the window.
      const r = random();
      now += r < 0.3 ? 0 : r < 0.995 ? Math.floor(random() * 40) : 2_000;
      const key = random() < 0.8 ? 'busy' : 'other';
      const decision = await limiter.consume(key, 20, 1_000);
      expect(decision).toEqual(naive(key, 20, 1_000, now));
      if (decision.allowed) admitted += 1;
    }
    // Both outcomes were exercised: the budget ran out in bursts and came back.
    expect(admitted).toBeGreaterThan(5_000);
    expect(admitted).toBeLessThan(20_000);
  });

  it("drops a key's log once its window is empty, at the next pass", async () => {
    let now = 0;
    const limiter = new MemoryRateLimiter(() => now);
    await limiter.consume('gone', 5, 1_000);
    await limiter.consume('kept', 5, 120_000);
    expect(limiter.size).toBe(2);
    now = IDLE_SWEEP_MS - 1;
    await limiter.consume('other', 5, 1_000);
    expect(limiter.size).toBe(3); // no pass yet
    now = IDLE_SWEEP_MS + 2_000;
    await limiter.consume('new', 5, 1_000);
    // 'gone' and 'other' have nothing left in their windows; 'kept' has (a window of 2 minutes).
    expect(limiter.size).toBe(2);
    expect((await limiter.consume('kept', 5, 120_000)).remaining).toBe(3);
  });
});
