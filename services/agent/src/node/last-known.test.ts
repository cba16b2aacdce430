import { LastKnown } from './last-known';

/** A reading that ends when the test says so. */
function controlledReads() {
  const pending: Array<(value: number) => void> = [];
  let calls = 0;
  const read = () => {
    calls += 1;
    return new Promise<number>((resolve) => pending.push(resolve));
  };
  return { read, pending, calls: () => calls };
}

/** A LastKnown (fresh for 1000 ms) over controlled readings, with a clock the test moves. */
function lastKnown(start = 0) {
  const reads = controlledReads();
  const clock = { now: start };
  const known = new LastKnown(reads.read, 1000, () => clock.now);
  return { reads, clock, known };
}

/** The same, once its first reading (`value`, at time 0) is in. */
async function readOnce(value: number) {
  const t = lastKnown();
  const first = t.known.get();
  t.reads.pending.shift()?.(value);
  await expect(first).resolves.toBe(value);
  return t;
}

describe('LastKnown', () => {
  it('waits for the first reading only', async () => {
    const { reads, clock, known } = await readOnce(3);
    clock.now = 5000;
    // Stale: answered at once with the last reading, while a new one runs (never resolved here).
    await expect(known.get()).resolves.toBe(3);
    expect(reads.calls()).toBe(2);
  });

  it('starts one reading at a time, and answers the new value once it is in', async () => {
    const { reads, clock, known } = await readOnce(1);
    clock.now = 2000;
    await known.get();
    await known.get();
    expect(reads.calls()).toBe(2);
    reads.pending.shift()?.(7);
    await new Promise((resolve) => setImmediate(resolve));
    await expect(known.get()).resolves.toBe(7);
  });

  it('reads again while fresh only when asked after freshMs', async () => {
    const { reads, clock, known } = await readOnce(1);
    clock.now = 999;
    await known.get();
    expect(reads.calls()).toBe(1);
  });

  it('keeps the last value when a background reading fails', async () => {
    let fail = false;
    let now = 0;
    const known = new LastKnown(
      () => (fail ? Promise.reject(new Error('dockerd busy')) : Promise.resolve(4)),
      1000,
      () => now,
    );
    await known.get();
    fail = true;
    now = 3000;
    await expect(known.get()).resolves.toBe(4);
    await new Promise((resolve) => setImmediate(resolve));
    await expect(known.get()).resolves.toBe(4);
  });

  it('says how old its answer is: from when that reading began', async () => {
    const { reads, clock, known } = lastKnown(100);
    const first = known.getAged();
    clock.now = 400; // the reading took 300 ms
    reads.pending.shift()?.(3);
    await expect(first).resolves.toEqual({ value: 3, ageMs: 300 });
    clock.now = 4100; // a busy dockerd: the next reading has not come back
    await expect(known.getAged()).resolves.toEqual({ value: 3, ageMs: 4000 });
  });
});
