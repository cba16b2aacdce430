import { setTimeout as sleep } from 'node:timers/promises';
import { doubles } from '../lifecycle/in-memory-doubles';
import { IdleFill, idleMembers, idleShares, type IdleFillSettings } from './idle-fill';
import type { PoolShape } from './pool-shapes';
import { WarmPool } from './warm-pool';

const MB = 1024 * 1024;
const SHAPE: PoolShape = { size: 2, memoryMb: 1024, cpu: 0.25, diskMb: 1024 };
const LIMITS = { memoryMb: 1024, cpu: 0.25, diskMb: 1024, pids: 0 };

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

describe('the idle budget', () => {
  it('is a share of the node memory at a member each, within the pool max', () => {
    // 10 % of 24 GiB at 32 MB a member: 76, within a pool max of 64.
    expect(idleMembers(10, 24 * 1024 * MB, 32 * MB, 64)).toBe(64);
    expect(idleMembers(10, 8 * 1024 * MB, 32 * MB, 64)).toBe(25);
    expect(idleMembers(0, 24 * 1024 * MB, 32 * MB, 64)).toBe(0);
  });

  it('is shared among shapes in proportion to their sizes, the rest to the first', () => {
    const small = { ...SHAPE, size: 1 };
    expect(idleShares(10, [SHAPE, small])).toEqual([7, 3]);
    expect(idleShares(10, [SHAPE])).toEqual([10]);
    expect(idleShares(0, [SHAPE, small])).toEqual([0, 0]);
  });
});

describe('IdleFill', () => {
  const settings = (available: () => number): IdleFillSettings => ({
    members: 4,
    afterMs: 5000,
    floorBytes: 1000 * MB,
    memberBytes: 32 * MB,
    available: () => Promise.resolve(available()),
  });

  it('grows only once the node has served nothing for a while', () => {
    let quietMs = 0;
    const fill = new IdleFill(
      settings(() => 4096 * MB),
      (ms) => quietMs >= ms,
    );
    expect(fill.growing()).toBe(false);
    quietMs = 5000;
    expect(fill.growing()).toBe(true);
  });

  it('gives back enough members to lift memory over the floor, and grows again only once the whole budget fits', async () => {
    let available = 4096 * MB;
    const fill = new IdleFill(
      settings(() => available),
      () => true,
    );
    expect(await fill.look()).toEqual({ giveBack: 0 });
    available = 1000 * MB - 70 * MB;
    expect(await fill.look()).toEqual({ giveBack: 3 });
    expect(fill.growing()).toBe(false);
    expect(fill.keeping()).toBe(false);
    // Just over the floor: members made in idle time would push it under again.
    available = 1000 * MB + 64 * MB;
    expect(await fill.look()).toEqual({ giveBack: 0 });
    expect(fill.keeping()).toBe(false);
    available = 1000 * MB + 4 * 32 * MB;
    await fill.look();
    expect(fill.keeping()).toBe(true);
    expect(fill.growing()).toBe(true);
  });
});

describe('WarmPool in idle time', () => {
  /** A node whose free memory, apart from the pool's members, is `free` (32 MB a member). */
  function idlePool(node: { quietMs: number; free: number }) {
    const d = doubles();
    const available = () => node.free - d.containers.byName.size * 32 * MB;
    const pool = new WarmPool({
      ...d,
      shapes: [SHAPE],
      retryDelayMs: 5,
      maxMembers: 8,
      busy: () => node.quietMs === 0,
      quietFor: (ms) => node.quietMs >= ms,
      maxDeferMs: 0,
      idleLookMs: 5,
      idleFill: {
        members: 6,
        afterMs: 5000,
        floorBytes: 1000 * MB,
        memberBytes: 32 * MB,
        available: () => Promise.resolve(available()),
      },
    });
    return { d, pool };
  }
  const ready = (pool: WarmPool) => pool.status()[0]!.ready;

  it('grows past its size towards the idle budget only while the node is idle, and keeps those members when it is busy again', async () => {
    // Requests now and then: pauses long enough for a refill, not for the idle fill.
    const node = { quietMs: 2000, free: 8192 * MB };
    const { pool } = idlePool(node);
    await pool.start();
    try {
      await until(() => ready(pool) === 2, 'the pool at its size');
      await sleep(30); // several looks at the node
      expect(ready(pool)).toBe(2);
      expect(pool.status()[0]!.target).toBe(2);
      node.quietMs = 5000;
      await until(() => ready(pool) === 6, 'the pool at its idle budget');
      expect(pool.status()[0]!.target).toBe(6);
      node.quietMs = 0;
      await pool.prune(); // the reconcile: what was made in idle time stays
      expect(ready(pool)).toBe(6);
      expect(pool.take(LIMITS)).toBeDefined();
    } finally {
      await pool.stop();
    }
  });

  it('gives back members made in idle time when memory runs low, never below what the creates ask for', async () => {
    const node = { quietMs: 5000, free: 8192 * MB };
    const { d, pool } = idlePool(node);
    await pool.start();
    await until(() => ready(pool) === 6, 'the pool at its idle budget');
    // Sessions take memory: 40 MB under the floor, which two members given back make up.
    node.free = 1152 * MB;
    await until(() => ready(pool) === 4, 'two members given back');
    await sleep(30);
    expect(ready(pool)).toBe(4);
    // More taken: down to its size, no lower, and no regrowth.
    node.free = 1000 * MB;
    await until(() => ready(pool) === 2, 'the pool back at its size');
    await sleep(30);
    expect(ready(pool)).toBe(2);
    expect(d.containers.byName.size).toBe(2);
    // Memory back with room for the whole budget: it grows again.
    node.free = 8192 * MB;
    await until(() => ready(pool) === 6, 'the pool at its idle budget again');
    await pool.stop();
  });
});
