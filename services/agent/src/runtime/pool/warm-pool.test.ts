import { containerName } from '../docker/docker-names';
import { doubles } from '../lifecycle/in-memory-doubles';
import { WarmPool } from './warm-pool';
import { LIMITS, made, pooled, SHAPE } from './warm-pool-fixtures';

describe('WarmPool', () => {
  it('fills each shape to its size with running members whose runner answered', async () => {
    const { d, pool } = pooled([SHAPE, { size: 1, memoryMb: 2048, cpu: 1, diskMb: 2048 }]);
    await pool.start();
    await pool.settled();
    expect(pool.status().map((s) => s.ready)).toEqual([2, 1]);
    expect(made(d)).toHaveLength(3);
    // Each member: its disk, then its container, then its runner.
    const slot = d.journal[0]!.split(' ')[1]!;
    expect(slot).toMatch(/^pool-[0-9a-f]{12}$/);
    expect(d.journal.slice(0, 3)).toEqual([
      `workspace.create ${slot}`,
      `container.create ${slot}`,
      `runner.warmUp ${slot} settled`,
    ]);
    const options = d.containers.byName.get(containerName(slot))!.options;
    expect(options.Labels).toEqual({
      'io.sandbox.managed': 'true',
      'io.sandbox.node': 'node-1',
      'io.sandbox.pool': 'true',
    });
    expect(options.HostConfig?.NanoCpus).toBe(0.25e9);
  });

  it('tells how long each member took to make (a cold start timed, for admission)', async () => {
    const d = doubles();
    const times: number[] = [];
    const pool = new WarmPool({
      ...d,
      shapes: [SHAPE],
      retryDelayMs: 5,
      onMemberMade: (ms) => times.push(ms),
    });
    await pool.start();
    await pool.settled();
    expect(times).toHaveLength(2);
    expect(times.every((ms) => Number.isFinite(ms) && ms >= 0)).toBe(true);
    expect(times.at(-1)).toBe(pool.refillTimes().lastMs);
  });

  it('hands out a member of the same disk size, preferring the same memory and CPU, and refills', async () => {
    const { d, pool } = pooled([
      { size: 1, memoryMb: 512, cpu: 1, diskMb: 1024 },
      { size: 1, memoryMb: 1024, cpu: 0.25, diskMb: 1024 },
    ]);
    await pool.start();
    await pool.settled();
    expect(pool.take({ ...LIMITS, diskMb: 4096 })).toBeUndefined();
    expect(pool.take(LIMITS)?.limits).toMatchObject({ memoryMb: 1024, cpu: 0.25 });
    expect(pool.take(LIMITS)?.limits).toMatchObject({ memoryMb: 512, cpu: 1 });
    expect(pool.take(LIMITS)).toBeUndefined();
    await pool.settled();
    // Three creates of the second shape within the minute: it grows to three.
    expect(pool.status().map((s) => [s.ready, s.target])).toEqual([
      [1, 1],
      [3, 3],
    ]);
    expect(made(d)).toHaveLength(6);
  });

  it('hands out only members of exactly the limits asked for on gVisor (no update there)', async () => {
    const { d, pool } = pooled([
      { size: 1, memoryMb: 512, cpu: 1, diskMb: 1024 },
      { size: 1, memoryMb: 1024, cpu: 0.25, diskMb: 1024 },
    ]);
    d.containers.ownKernel = () => Promise.resolve(true);
    await pool.start();
    await pool.settled();
    expect(pool.take(LIMITS)?.limits).toMatchObject({ memoryMb: 1024, cpu: 0.25 });
    // Runc would hand out the 512 MB member and change its limits; gVisor cannot.
    expect(pool.take(LIMITS)).toBeUndefined();
    expect(pool.take({ ...LIMITS, memoryMb: 512, cpu: 1 })?.limits).toMatchObject({
      memoryMb: 512,
      cpu: 1,
    });
  });
});

describe('WarmPool refills', () => {
  it('does not refill while a create it could not serve is running', async () => {
    const { d, pool } = pooled();
    await pool.start();
    await pool.settled();
    let finish!: () => void;
    const cold = pool.cold(() => new Promise<void>((resolve) => (finish = resolve)));
    pool.take(LIMITS);
    pool.take(LIMITS);
    await pool.settled();
    expect(made(d)).toHaveLength(2);
    finish();
    await cold;
    await pool.settled();
    expect(made(d)).toHaveLength(4);
    expect(pool.status()[0]!.ready).toBe(2);
  });

  it('refills a low pool at a slower pace while the node serves requests, but does not stop', async () => {
    const d = doubles();
    let busy = true;
    const pool = new WarmPool({
      ...d,
      shapes: [{ ...SHAPE, size: 1 }],
      busy: () => busy,
      quietFor: () => false,
      maxDeferMs: 300,
    });
    const started = Date.now();
    await pool.start();
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(made(d)).toHaveLength(0);
    await pool.settled();
    expect(made(d)).toHaveLength(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300); // it waited its 300 ms
    pool.take(LIMITS);
    busy = false; // a gap between two requests: the empty pool refills in it
    await pool.settled();
    expect(made(d)).toHaveLength(2);
  });

  it('refills a pool with a quarter of its target ready only after a pause in requests', async () => {
    const d = doubles();
    let quiet = false;
    const asked: number[] = [];
    const pool = new WarmPool({
      ...d,
      shapes: [{ ...SHAPE, size: 4 }],
      busy: () => false, // the gaps of a burst
      quietFor: (ms) => {
        asked.push(ms);
        return quiet;
      },
      settleMs: 1500,
    });
    await pool.start();
    // The first member is made at once (none of 4 ready is low); the next waits for the pause.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(made(d)).toHaveLength(1);
    expect(new Set(asked)).toEqual(new Set([1500]));
    quiet = true;
    await pool.settled();
    expect(made(d)).toHaveLength(4);
  });
});

describe('WarmPool: growth and stop', () => {
  it('grows with the creates of the last window, within its budget, and shrinks back after', async () => {
    let now = 0;
    const d = doubles();
    const pool = new WarmPool({
      ...d,
      shapes: [SHAPE],
      retryDelayMs: 5,
      maxMembers: 5,
      demandWindowMs: 1000,
      demandHoldMs: 3000,
      now: () => now,
    });
    await pool.start();
    await pool.settled();
    const served = Array.from({ length: 8 }, () => pool.take(LIMITS));
    expect(served.filter((m) => m !== undefined)).toHaveLength(2);
    await pool.settled();
    // Eight creates in the window, but a budget of five.
    expect(pool.status()[0]).toMatchObject({ size: 2, target: 5, ready: 5, hits: 2, misses: 6 });
    now = 2000; // the window has passed, but the burst's demand holds the pool up a while
    await pool.prune();
    expect(pool.status()[0]).toMatchObject({ target: 5, ready: 5 });
    now = 5000; // past the hold without a create: back to its size
    await pool.prune();
    expect(pool.status()[0]).toMatchObject({ target: 2, ready: 2 });
    // The two sessions' sandboxes and two members: the three above the size went.
    expect(d.containers.byName.size).toBe(4);
  });

  it('removes its ready members when stopped, and makes no more', async () => {
    const { d, pool } = pooled();
    await pool.start();
    await pool.settled();
    await pool.stop();
    expect(d.containers.byName.size).toBe(0);
    expect(d.workspaces.disks.size).toBe(0);
    expect(pool.take(LIMITS)).toBeUndefined();
    await pool.settled();
    expect(made(d)).toHaveLength(2);
  });
});
