import { createLogger } from '@sandbox/logger';
import type { IdempotencyStore } from '../idempotency/idempotency-store';
import type { SessionLifecycle } from './session-lifecycle';
import type { SessionService } from './session-service';
import type { SessionStore } from './session-store';
import { SessionSweeper } from './session-sweeper';

const INTERVAL_MS = 30_000;

/** A sweeper over doubles that count its sweeps; `nextMs` is what the deadlines query says. */
function setUp(nextMs: () => number | null, atDeadlines = true) {
  const sweeps: number[] = [];
  let failing = false;
  const store = {
    expireDue: () => {
      if (failing) return Promise.reject(new Error('database away'));
      sweeps.push(Date.now());
      return Promise.resolve([]);
    },
    claimPendingDestroys: () => Promise.resolve([]),
  } as unknown as SessionStore;
  const lifecycle = {
    pass: () => Promise.resolve({ idled: [], slept: [] }),
    msUntilNextTransition: () => Promise.resolve(nextMs()),
  } as unknown as SessionLifecycle;
  const sweeper = new SessionSweeper({
    store,
    sessions: {} as SessionService,
    idempotency: { purgeExpired: () => Promise.resolve() } as unknown as IdempotencyStore,
    terminals: { purgeExpired: () => Promise.resolve(0) },
    lifecycle,
    logger: createLogger({ name: 'test', level: 'silent' }),
    intervalMs: INTERVAL_MS,
    atDeadlines,
  });
  return { sweeper, sweeps, fail: (value: boolean) => (failing = value) };
}

describe('SessionSweeper', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => jest.useRealTimers());

  it('sweeps at start, then at the next deadline the database names', async () => {
    const t = setUp(() => 2500);
    t.sweeper.start();
    await jest.advanceTimersByTimeAsync(0);
    expect(t.sweeps).toEqual([1_000_000]);
    await jest.advanceTimersByTimeAsync(2499);
    expect(t.sweeps).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(t.sweeps).toEqual([1_000_000, 1_002_500]);
    await t.sweeper.stop();
  });

  it('waits at most the interval, and at least a moment when a deadline is already past', async () => {
    let next: number | null = null;
    const t = setUp(() => next);
    t.sweeper.start();
    await jest.advanceTimersByTimeAsync(INTERVAL_MS);
    expect(t.sweeps).toHaveLength(2);
    next = -5000; // a row another replica holds: not retried in a busy loop
    await jest.advanceTimersByTimeAsync(INTERVAL_MS);
    const before = t.sweeps.length;
    await jest.advanceTimersByTimeAsync(1000);
    expect(t.sweeps.length - before).toBeLessThanOrEqual(10);
    expect(t.sweeps.length - before).toBeGreaterThanOrEqual(9);
    await t.sweeper.stop();
  });

  it('sweeps sooner when a session is due before the planned sweep', async () => {
    const t = setUp(() => null);
    t.sweeper.start();
    await jest.advanceTimersByTimeAsync(0);
    t.sweeper.dueBy(new Date(Date.now() + 1000));
    t.sweeper.dueBy(new Date(Date.now() + 20_000)); // later than planned now: no change
    await jest.advanceTimersByTimeAsync(1000);
    expect(t.sweeps).toEqual([1_000_000, 1_001_000]);
    await t.sweeper.stop();
  });
});

describe('SessionSweeper: deadlines told mid-sweep, no deadlines, failures', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => jest.useRealTimers());

  it('keeps a deadline told while a sweep runs', async () => {
    let release: () => void = () => undefined;
    let first = true;
    const t = setUp(() => null);
    const lifecycle = (t.sweeper as unknown as { deps: { lifecycle: SessionLifecycle } }).deps
      .lifecycle;
    lifecycle.msUntilNextTransition = () => {
      if (!first) return Promise.resolve(null);
      first = false;
      return new Promise((resolve) => (release = () => resolve(null)));
    };
    t.sweeper.start();
    await jest.advanceTimersByTimeAsync(0);
    t.sweeper.dueBy(new Date(Date.now() + 500));
    release();
    await jest.advanceTimersByTimeAsync(500);
    expect(t.sweeps).toEqual([1_000_000, 1_000_500]);
    await t.sweeper.stop();
  });

  it('only sweeps every interval when deadlines are off (tests that sweep themselves)', async () => {
    const t = setUp(() => 100, false);
    t.sweeper.start();
    t.sweeper.dueBy(new Date(Date.now() + 10));
    await jest.advanceTimersByTimeAsync(INTERVAL_MS - 1);
    expect(t.sweeps).toHaveLength(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(t.sweeps).toHaveLength(1);
    await t.sweeper.stop();
  });

  it('goes on after a failed sweep, and stops for good', async () => {
    const t = setUp(() => 1000);
    t.fail(true);
    t.sweeper.start();
    await jest.advanceTimersByTimeAsync(0);
    expect(t.sweeps).toHaveLength(0);
    t.fail(false);
    await jest.advanceTimersByTimeAsync(INTERVAL_MS);
    expect(t.sweeps).toHaveLength(1);
    await t.sweeper.stop();
    await jest.advanceTimersByTimeAsync(INTERVAL_MS * 3);
    expect(t.sweeps).toHaveLength(1);
  });
});
