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

describe('LastKnown', () => {
  it('waits for the first reading only', async () => {
    const reads = controlledReads();
    let now = 0;
    const known = new LastKnown(reads.read, 1000, () => now);
    const first = known.get();
    reads.pending.shift()?.(3);
    await expect(first).resolves.toBe(3);
    now = 5000;
    // Stale: answered at once with the last reading, while a new one runs (never resolved here).
    await expect(known.get()).resolves.toBe(3);
    expect(reads.calls()).toBe(2);
  });

  it('starts one reading at a time, and answers the new value once it is in', async () => {
    const reads = controlledReads();
    let now = 0;
    const known = new LastKnown(reads.read, 1000, () => now);
    const first = known.get();
    reads.pending.shift()?.(1);
    await first;
    now = 2000;
    await known.get();
    await known.get();
    expect(reads.calls()).toBe(2);
    reads.pending.shift()?.(7);
    await new Promise((resolve) => setImmediate(resolve));
    await expect(known.get()).resolves.toBe(7);
  });

  it('reads again while fresh only when asked after freshMs', async () => {
    const reads = controlledReads();
    let now = 0;
    const known = new LastKnown(reads.read, 1000, () => now);
    const first = known.get();
    reads.pending.shift()?.(1);
    await first;
    now = 999;
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
    const reads = controlledReads();
    let now = 100;
    const known = new LastKnown(reads.read, 1000, () => now);
    const first = known.getAged();
    now = 400; // the reading took 300 ms
    reads.pending.shift()?.(3);
    await expect(first).resolves.toEqual({ value: 3, ageMs: 300 });
    now = 4100; // a busy dockerd: the next reading has not come back
    await expect(known.getAged()).resolves.toEqual({ value: 3, ageMs: 4000 });
  });
});
