import { AppError } from '@sandbox/errors';
import { Admission } from './admission';

/** Work that ends when the test says so. */
function heldWork() {
  const releases: Array<() => void> = [];
  let started = 0;
  const work = () => {
    started += 1;
    return new Promise<string>((resolve) => releases.push(() => resolve('made')));
  };
  return { work, releases, started: () => started };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** One slot (`maxQueued` waiting), starts first thought to take `initialMs`, a test's clock. */
function oneSlot(maxQueued: number, initialMs: number) {
  const clock = { now: 0 };
  const held = heldWork();
  const starts = new Admission({ concurrency: 1, maxQueued, initialMs, now: () => clock.now });
  return { clock, held, starts };
}

describe('Admission', () => {
  it('runs `concurrency` at once and the rest in turn', async () => {
    const held = heldWork();
    const starts = new Admission({ concurrency: 2, maxQueued: 10 });
    const runs = [1, 2, 3, 4].map(() => starts.run(held.work));
    await tick();
    expect(held.started()).toBe(2);
    expect(starts.stats()).toMatchObject({ running: 2, queued: 2 });
    held.releases.shift()?.();
    await tick();
    expect(held.started()).toBe(3);
    // A newcomer while one waits does not jump the queue or exceed the concurrency.
    const late = starts.run(held.work);
    await tick();
    expect(held.started()).toBe(3);
    for (let i = 0; i < 4; i += 1) {
      held.releases.shift()?.();
      await tick();
    }
    await expect(Promise.all([...runs, late])).resolves.toEqual(Array(5).fill('made'));
  });

  it('refuses at once, with Retry-After, a start that could not finish before its deadline', async () => {
    const { clock, held, starts } = oneSlot(10, 2000);
    const first = starts.run(held.work, 10_000);
    // One ahead: this one would end at about 4 s, past a deadline at 3 s.
    const refused = starts.run(held.work, 3000);
    await expect(refused).rejects.toMatchObject({ code: 'service_unavailable', retryAfter: 4 });
    await tick();
    expect(held.started()).toBe(1);
    expect(starts.stats().refused).toBe(1);
    clock.now = 1000;
    held.releases.shift()?.();
    await first;
  });

  it('refuses a waiter whose turn comes too late, before its work starts', async () => {
    const { clock, held, starts } = oneSlot(10, 1000);
    const first = starts.run(held.work);
    const waiter = starts.run(held.work, 2500);
    await tick();
    clock.now = 2000; // the first took 2 s: the waiter's deadline cannot be met any more
    held.releases.shift()?.();
    await first;
    await expect(waiter).rejects.toBeInstanceOf(AppError);
    expect(held.started()).toBe(1);
  });

  it('starts at once when a slot is free, however slow starts have been', async () => {
    const { clock, held, starts } = oneSlot(0, 60_000);
    const run = starts.run(held.work, 1000);
    await tick();
    expect(held.started()).toBe(1);
    clock.now = 200;
    held.releases.shift()?.();
    await expect(run).resolves.toBe('made');
  });

  it('refuses past its bounded queue', async () => {
    const held = heldWork();
    const starts = new Admission({ concurrency: 1, maxQueued: 1 });
    const running = starts.run(held.work);
    const queued = starts.run(held.work);
    await expect(starts.run(held.work)).rejects.toMatchObject({ code: 'service_unavailable' });
    held.releases.shift()?.();
    await running;
    await tick();
    held.releases.shift()?.();
    await queued;
  });
});

describe('Admission: learning how long a start takes', () => {
  it('learns how long a start takes: the first timed replaces the guess, the next move it', async () => {
    const { clock, starts } = oneSlot(1, 2000);
    const startTaking = (ms: number) =>
      starts.run(() => {
        clock.now += ms;
        return Promise.resolve();
      });
    await startTaking(500);
    expect(starts.stats().typicalMs).toBe(500);
    await startTaking(1500);
    expect(starts.stats().typicalMs).toBe(800);
  });

  it('takes starts timed elsewhere in place of its guess, until it has timed one itself', async () => {
    const { clock, starts } = oneSlot(1, 2000);
    starts.learn(400);
    expect(starts.stats().typicalMs).toBe(400);
    starts.learn(600);
    expect(starts.stats().typicalMs).toBe(460);
    await starts.run(() => {
      clock.now += 1000;
      return Promise.resolve();
    });
    starts.learn(100); // its own timing counts now, not the pool's
    expect(starts.stats().typicalMs).toBe(1000);
  });

  it('admits ten starts on two slots within 10 s before any start was timed', async () => {
    const clock = { now: 0 };
    const held = heldWork();
    const starts = new Admission({ concurrency: 2, maxQueued: 32, now: () => clock.now });
    const runs = Array.from({ length: 10 }, () => starts.run(held.work, clock.now + 10_000));
    await tick();
    expect(starts.stats()).toMatchObject({ running: 2, queued: 8, refused: 0 });
    for (let i = 0; i < 10; i += 1) {
      clock.now += 250;
      held.releases[i]?.();
      await tick();
      await tick();
    }
    await expect(Promise.all(runs)).resolves.toEqual(Array(10).fill('made'));
  });

  it('holds a turn from `enter` until its end is called, once however many times', async () => {
    const starts = new Admission({ concurrency: 1, maxQueued: 1 });
    const first = await starts.enter();
    let second: (() => void) | undefined;
    const waiting = starts.enter().then((done) => (second = done));
    await tick();
    expect(starts.stats()).toMatchObject({ running: 1, queued: 1 });
    first();
    first(); // a second call frees nothing more
    await waiting;
    expect(starts.stats()).toMatchObject({ running: 1, queued: 0 });
    second?.();
    expect(starts.stats()).toMatchObject({ running: 0, queued: 0 });
  });
});
