import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CgroupFreezer } from '../docker/cgroup-freezer';
import { containerName } from '../docker/docker-names';
import { doubles } from '../lifecycle/in-memory-doubles';
import { WarmPool } from './warm-pool';
import { LIMITS, made, pooled, SHAPE } from './warm-pool-fixtures';

/* The WarmPool members that fail, stop, die, meet a new user mapping or wait frozen. */

describe('WarmPool: members that failed or stopped', () => {
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
});

describe('WarmPool: members whose container died', () => {
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
});

describe('WarmPool: the user mapping', () => {
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
});

describe('WarmPool: frozen members', () => {
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
});
