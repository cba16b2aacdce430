import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CgroupFreezer } from '../docker/cgroup-freezer';
import { containerName } from '../docker/docker-names';
import { doubles, type Doubles } from '../lifecycle/in-memory-doubles';
import type { PoolShape } from './pool-shapes';
import { WarmPool } from './warm-pool';

const SHAPE: PoolShape = { size: 2, memoryMb: 1024, cpu: 0.25, diskMb: 1024 };
const LIMITS = { memoryMb: 1024, cpu: 0.25, diskMb: 1024, pids: 0 };

function pooled(shapes: PoolShape[] = [SHAPE]): { d: Doubles; pool: WarmPool } {
  const d = doubles();
  const pool = new WarmPool({ ...d, shapes, retryDelayMs: 5 });
  return { d, pool };
}

const made = (d: Doubles) => d.journal.filter((step) => step.startsWith('container.create'));

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

  it('cleans up a member it could not make, and tries again later', async () => {
    const { d, pool } = pooled([{ ...SHAPE, size: 1 }]);
    d.containers.failCreate = new Error('no more containers');
    await pool.start();
    await pool.settled();
    const failed = d.journal[0]!.split(' ')[1]!;
    expect(d.journal).toContain(`workspace.destroy ${failed}`);
    expect(d.workspaces.disks.has(failed)).toBe(false);
    expect(pool.status()[0]!.ready).toBe(1);
  });

  it('removes the members an earlier run left, but not claimed ones, before filling', async () => {
    const { d, pool } = pooled([{ ...SHAPE, size: 0 }]);
    const labels = { 'io.sandbox.node': 'node-1', 'io.sandbox.pool': 'true' };
    d.containers.put('pool-aaaaaaaaaaaa', 'running', labels);
    d.containers.put('ses_claimed', 'running', labels);
    await d.workspaces.create('pool-aaaaaaaaaaaa');
    await d.workspaces.create('pool-bbbbbbbbbbbb'); // a disk whose container was never made
    await d.workspaces.create('ses_claimed');
    d.journal.length = 0;
    await pool.start();
    expect(d.journal).toEqual(
      expect.arrayContaining([
        'container.remove pool-aaaaaaaaaaaa',
        'workspace.destroy pool-aaaaaaaaaaaa',
        'workspace.destroy pool-bbbbbbbbbbbb',
      ]),
    );
    expect(d.containers.byName.has(containerName('ses_claimed'))).toBe(true);
    expect(d.workspaces.disks.has('ses_claimed')).toBe(true);
  });

  it('replaces a member whose container stopped', async () => {
    const { d, pool } = pooled([{ ...SHAPE, size: 1 }]);
    await pool.start();
    await pool.settled();
    const [first] = [...d.containers.byName.values()];
    first!.state.running = false;
    await pool.prune();
    await pool.settled();
    expect(d.journal.filter((s) => s.startsWith('container.remove'))).toHaveLength(1);
    expect(made(d)).toHaveLength(2);
    expect(pool.take(LIMITS)?.containerId).not.toBe(first!.state.id);
  });

  it('drops a member at once when Docker reports its container died, and replaces it', async () => {
    const { d, pool } = pooled([{ ...SHAPE, size: 2 }]);
    await pool.start();
    await pool.settled();
    const [dead, alive] = [...d.containers.byName.values()];
    pool.dropEnded(dead!.state.id);
    pool.dropEnded('an-unknown-container'); // not a member: nothing happens
    expect(pool.status()[0]!.ready).toBe(1);
    await pool.settled();
    expect(d.journal.filter((s) => s.startsWith('container.remove'))).toHaveLength(1);
    expect(made(d)).toHaveLength(3);
    const handed = [pool.take(LIMITS)?.containerId, pool.take(LIMITS)?.containerId];
    expect(handed).toContain(alive!.state.id);
    expect(handed).not.toContain(dead!.state.id);
  });

  it('removes a dropped member later when Docker could not remove it then', async () => {
    const { d, pool } = pooled([{ ...SHAPE, size: 1 }]);
    await pool.start();
    await pool.settled();
    const [dead] = [...d.containers.byName.values()];
    d.containers.failRemove = new Error('connect ENOENT /var/run/docker.sock');
    pool.dropEnded(dead!.state.id);
    await pool.settled();
    expect([...d.containers.byName.values()]).toContain(dead);
    await pool.prune();
    expect([...d.containers.byName.values()]).not.toContain(dead);
    expect(d.containers.byName.size).toBe(1);
  });

  it('removes a member it could not finish, when Docker could not remove it then, before the next', async () => {
    const { d, pool } = pooled([{ ...SHAPE, size: 1 }]);
    // Docker restarting: the runner's warm-up fails, and so does the removal after it.
    d.runners.failWarmUp = new Error('connect ENOENT /var/run/docker.sock');
    d.containers.failRemove = new Error('connect ENOENT /var/run/docker.sock');
    await pool.start();
    await pool.settled();
    const failed = d.journal[0]!.split(' ')[1]!;
    expect(d.containers.byName.has(containerName(failed))).toBe(false);
    expect(d.workspaces.disks.has(failed)).toBe(false);
    expect(d.containers.byName.size).toBe(1); // the member made after it
    expect(pool.status()[0]!.ready).toBe(1);
  });

  it("never hands out a member made for the engine's former user mapping, and replaces it", async () => {
    const d = doubles();
    let mapping = '0:0';
    const pool = new WarmPool({ ...d, shapes: [SHAPE], retryDelayMs: 5, mapping: () => mapping });
    await pool.start();
    await pool.settled();
    const before = [...d.containers.byName.values()].map((c) => c.state.id);
    expect(before).toHaveLength(2);
    // dockerd came back remapped; the agent has learned it.
    mapping = '100000:100000';
    expect(pool.take(LIMITS)).toBeUndefined(); // the create starts cold
    await pool.settled();
    expect(d.journal.filter((s) => s.startsWith('container.remove'))).toHaveLength(2);
    expect(pool.status()[0]!.ready).toBe(2);
    expect(before).not.toContain(pool.take(LIMITS)?.containerId);
    // The check of the host after a docker restart prunes them too, with no take.
    mapping = '200000:200000';
    await pool.prune();
    await pool.settled();
    // The one left of the second pair went.
    expect(d.journal.filter((s) => s.startsWith('container.remove'))).toHaveLength(3);
    expect(pool.status()[0]!.ready).toBe(2);
  });

  it('discards a member whose making straddled a change of the user mapping', async () => {
    const d = doubles();
    let mapping = '0:0';
    const pool = new WarmPool({
      ...d,
      shapes: [{ ...SHAPE, size: 1 }],
      retryDelayMs: 5,
      mapping: () => mapping,
    });
    const warmUp = d.runners.warmUp.bind(d.runners);
    let learnedOnce = false;
    d.runners.warmUp = async (slot: string) => {
      await warmUp(slot);
      if (!learnedOnce) mapping = '100000:100000'; // learned while this one was made
      learnedOnce = true;
    };
    await pool.start();
    await pool.settled();
    const [first, second] = made(d).map((step) => step.split(' ')[1]!);
    expect(d.journal).toContain(`workspace.destroy ${first}`);
    expect(d.workspaces.disks.has(first!)).toBe(false);
    expect(pool.take(LIMITS)?.slot).toBe(second);
  });

  it('keeps its members frozen while they wait, and hands them out marked so', async () => {
    const { d, pool } = pooled();
    await pool.start();
    await pool.settled();
    const slot = d.journal[0]!.split(' ')[1]!;
    expect(d.journal.slice(0, 4)).toEqual([
      `workspace.create ${slot}`,
      `container.create ${slot}`,
      `runner.warmUp ${slot} settled`, // its start-up done: the claim does not pay for it
      `container.pause ${slot}`,
    ]);
    expect([...d.containers.byName.values()].every((c) => c.state.paused)).toBe(true);
    expect(pool.take(LIMITS)).toMatchObject({ frozen: true });
    await pool.settled();
    // A frozen member is a healthy one: the reconcile's prune keeps it.
    await pool.prune();
    await pool.settled();
    expect(pool.status()[0]!.ready).toBe(2);
  });

  it("freezes members through their cgroup where it may: Docker's pause is not used, and a removal thaws first", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pool-freezer-'));
    const freezers: CgroupFreezer[] = [];
    const d = doubles();
    const pool = new WarmPool({
      ...d,
      shapes: [SHAPE],
      retryDelayMs: 5,
      // A file that says what it was told stands for a cgroup's freezer.
      freezerOf: (pid) => {
        const path = join(dir, `${pid}-${freezers.length}`);
        const freezer = { path, statePath: path, frozen: 'FROZEN', frozenLine: 'FROZEN' };
        freezers.push({ ...freezer, thawed: 'THAWED' });
        return Promise.resolve(freezers.at(-1));
      },
    });
    await pool.start();
    await pool.settled();
    expect(d.journal.filter((step) => step.startsWith('container.pause'))).toEqual([]);
    expect(freezers.map((f) => readFileSync(f.path, 'utf8'))).toEqual(['FROZEN', 'FROZEN']);
    // Docker sees them running: the reconcile's prune keeps them.
    await pool.prune();
    expect(pool.status()[0]!.ready).toBe(2);
    expect(pool.take(LIMITS)).toMatchObject({ frozen: true, freezer: freezers[0] });
    await pool.settled();
    await pool.stop();
    // Every member left was thawed before its removal (a frozen task would not die).
    expect(freezers.slice(1).map((f) => readFileSync(f.path, 'utf8'))).toEqual([
      'THAWED',
      'THAWED',
    ]);
    expect(d.containers.byName.size).toBe(1); // the one taken: a session's now
  });

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
