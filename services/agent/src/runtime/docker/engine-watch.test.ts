import { createLogger } from '@sandbox/logger';
import { EngineWatch } from './engine-watch';

/** A probe the test answers by hand; counts how many were made. */
function handProbe() {
  const pending: Array<{ answer: () => void; fail: () => void }> = [];
  let made = 0;
  const probe = () =>
    new Promise<void>((resolve, reject) => {
      made += 1;
      pending.push({ answer: resolve, fail: () => reject(new Error('404 no such network')) });
    });
  return { probe, pending, made: () => made };
}

function watchWith(probe: () => Promise<unknown>) {
  const logs: Array<{ level: string; msg: string }> = [];
  const logger = createLogger({ name: 'test', level: 'silent' });
  for (const level of ['error', 'warn'] as const) {
    logger[level] = ((_obj: unknown, msg: string) => logs.push({ level, msg })) as never;
  }
  let now = 0;
  const watch = new EngineWatch({
    probe,
    intervalMs: 10_000,
    wedgedAfterMs: 30_000,
    logger,
    now: () => now,
  });
  const changes: boolean[] = [];
  watch.onChange((wedged) => changes.push(wedged));
  /** Time passes, a second at a time (the clock and the timers together). */
  const advance = async (ms: number) => {
    await jest.advanceTimersByTimeAsync(0);
    for (let left = ms; left > 0; left -= 1000) {
      now += Math.min(1000, left);
      await jest.advanceTimersByTimeAsync(Math.min(1000, left));
    }
  };
  return { watch, logs, changes, advance };
}

describe('EngineWatch', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('says the engine is wedged once a probe waits too long, and when it answers again', async () => {
    const { probe, pending, made } = handProbe();
    const { watch, logs, changes, advance } = watchWith(probe);
    watch.start();
    pending.shift()!.answer();
    await advance(10_000);
    expect(watch.status()).toMatchObject({ wedged: false, lastProbeMs: 0 });

    // The second probe hangs: no other is made meanwhile, and the wedge is told once.
    await advance(40_000);
    expect(made()).toBe(2);
    expect(watch.status()).toMatchObject({ wedged: true, waitingMs: 40_000 });
    expect(changes).toEqual([true]);
    expect(logs.filter((l) => l.level === 'error')).toHaveLength(1);
    expect(logs[0]!.msg).toContain('restart dockerd');

    pending.shift()!.answer();
    await advance(0);
    expect(watch.status()).toEqual({ wedged: false, lastProbeMs: 40_000, waitingMs: 0 });
    expect(changes).toEqual([true, false]);
    watch.stop();
  });

  it('counts an error answer as an answer', async () => {
    const { probe, pending } = handProbe();
    const { watch, changes, advance } = watchWith(probe);
    watch.start();
    await advance(20_000);
    pending.shift()!.fail();
    await advance(20_000);
    expect(watch.status().wedged).toBe(false);
    expect(changes).toEqual([]);
    watch.stop();
  });

  it('probes no more once stopped', async () => {
    const { probe, pending, made } = handProbe();
    const { watch, advance } = watchWith(probe);
    watch.start();
    pending.shift()!.answer();
    await advance(0);
    watch.stop();
    await advance(60_000);
    expect(made()).toBe(1);
  });
});
