import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WarmPool } from '../pool/warm-pool';
import { createSandbox } from './create-sandbox';
import { restoreSandbox } from './deep-sleep';
import { heal } from './heal';
import { doubles, type Doubles } from './in-memory-doubles';
import { countSandboxes, reconcile } from './reconcile';
import { findSandbox } from './sandbox-info';
import { dockerError, sandboxSpec } from './test-fixtures';

/** Lifecycle doubles with a warm pool of one member of `sandboxSpec`'s disk size. */
async function withPool(memoryMb = 256, cpu = 1): Promise<Doubles & { pool: WarmPool }> {
  const d = doubles();
  const pool = new WarmPool({
    ...d,
    shapes: [{ size: 1, memoryMb, cpu, diskMb: 512 }],
    retryDelayMs: 5,
  });
  await pool.start();
  await pool.settled();
  d.journal.length = 0;
  return { ...d, pool };
}

/** The steps about the session and the pool member (the pool's refill runs meanwhile). */
const steps = (d: Doubles, slot: string) =>
  d.journal.filter((step) => step.includes('ses_1') || step.includes(slot));

const slotOf = (d: Doubles) => [...d.workspaces.disks.keys()].find((s) => s.startsWith('pool-'))!;

/** `sandboxSpec`, with the node's default process limit (as the pool's members have). */
const spec = (sessionId: string) => {
  const base = sandboxSpec(sessionId);
  return { ...base, limits: { ...base.limits, pids: 0 } };
};

const create = (d: Doubles, sessionId = 'ses_1') =>
  d.locks.withLock(sessionId, (lock) => createSandbox(d, lock, spec(sessionId)));

describe('a create served by the warm pool', () => {
  it('records the spec, then gives the member its workspace, name and runner; no container is made', async () => {
    const d = await withPool(256, 1);
    const slot = slotOf(d);
    const member = await d.containers.find(`sbx-${slot}`);
    const info = await create(d);
    expect(info).toMatchObject({ sessionId: 'ses_1', status: 'running', containerId: member!.id });
    expect(steps(d, slot)).toEqual([
      'spec.write ses_1',
      `workspace.adopt ${slot} ses_1`,
      // It waited frozen: the claim thaws it before it takes the session's name.
      `container.unpause ${slot}`,
      `container.rename ${slot} ses_1`,
      `runner.adopt ${slot} ses_1`,
    ]);
    expect(d.journal.filter((s) => s === 'container.create ses_1')).toEqual([]);
    expect((await findSandbox(d, 'ses_1'))?.id).toBe(member!.id);
    expect(d.workspaces.disks.has('ses_1')).toBe(true);
    await d.pool.settled();
    expect(d.pool.status()[0]!.ready).toBe(1); // refilled
  });

  it('thaws a member frozen through its cgroup by writing its freezer, not through Docker', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'claim-freezer-'));
    let made = 0;
    const d = doubles();
    const pool = new WarmPool({
      ...d,
      shapes: [{ size: 1, memoryMb: 256, cpu: 1, diskMb: 512 }],
      retryDelayMs: 5,
      freezerOf: (pid) => {
        const path = join(dir, `${pid}-${made++}`);
        return Promise.resolve({
          path,
          statePath: path,
          frozen: 'FROZEN',
          thawed: 'THAWED',
          frozenLine: 'FROZEN',
        });
      },
    });
    await pool.start();
    await pool.settled();
    const [file] = readdirSync(dir);
    expect(readFileSync(join(dir, file!), 'utf8')).toBe('FROZEN');
    await create({ ...d, pool });
    expect(readFileSync(join(dir, file!), 'utf8')).toBe('THAWED');
    await pool.settled(); // its replacement, frozen the same way
    expect(d.journal.filter((step) => step.startsWith('container.unpause'))).toEqual([]);
    await pool.stop();
  });

  it("applies the session's memory, CPU and process limits when the member has others", async () => {
    const d = await withPool(1024, 0.25);
    await d.locks.withLock('ses_1', (lock) => createSandbox(d, lock, sandboxSpec('ses_1')));
    // Before the rename: found by the session's name, the container has the session's limits.
    const slot = [...d.journal].find((step) => step.startsWith('container.update '))!.split(' ')[1];
    expect(d.journal.indexOf(`container.update ${slot}`)).toBeLessThan(
      d.journal.indexOf(`container.rename ${slot} ses_1`),
    );
    const state = await findSandbox(d, 'ses_1');
    expect(state?.memoryBytes).toBe(256 * 1024 * 1024);
    expect(state?.pidsLimit).toBe(64);
  });
});

describe('a create the warm pool cannot serve as it is', () => {
  it('starts a new container on the adopted workspace when the member cannot take the name', async () => {
    const d = await withPool();
    const slot = slotOf(d);
    d.containers.failRename = dockerError(500);
    const info = await create(d);
    expect(info.status).toBe('running');
    expect(d.journal).toContain(`container.remove ${slot}`);
    expect(d.journal).toContain('container.create ses_1');
    expect(d.journal).not.toContain('workspace.destroy ses_1');
    expect(d.workspaces.disks.has('ses_1')).toBe(true);
  });

  it('discards the member and starts cold when its workspace cannot be adopted', async () => {
    const d = await withPool();
    const slot = slotOf(d);
    const member = await d.containers.find(`sbx-${slot}`);
    d.workspaces.disks.set('ses_1', { attaches: true }); // the session has a disk already
    const info = await create(d);
    expect(info.status).toBe('running');
    expect(info.containerId).not.toBe(member!.id);
    expect(await d.containers.find(member!.id)).toBeUndefined();
    expect(d.journal).toContain(`workspace.destroy ${slot}`);
    expect(d.journal).toContain('container.create ses_1');
  });

  it('starts cold, as a create the pool could not serve, when no member has its disk size', async () => {
    const d = await withPool();
    const cold = jest.spyOn(d.pool, 'cold');
    const spec = {
      ...sandboxSpec('ses_1'),
      limits: { ...sandboxSpec('ses_1').limits, diskMb: 4096 },
    };
    const info = await d.locks.withLock('ses_1', (lock) => createSandbox(d, lock, spec));
    expect(info.status).toBe('running');
    expect(cold).toHaveBeenCalledTimes(1);
    expect(d.journal).toEqual([
      'workspace.create ses_1',
      'spec.write ses_1',
      'container.create ses_1',
      'runner.warmUp ses_1',
    ]);
    expect(d.pool.status()[0]!.ready).toBe(1);
  });

  it('restores a sleeping session into a member before the member takes its name', async () => {
    const d = await withPool();
    const slot = slotOf(d);
    await d.blobs.save('ses_1');
    d.journal.length = 0;
    const info = await restoreSandbox(d, spec('ses_1'));
    expect(info.status).toBe('running');
    expect(steps(d, slot).slice(0, 5)).toEqual([
      'blob.restore ses_1',
      'spec.write ses_1',
      `workspace.adopt ${slot} ses_1`,
      `container.unpause ${slot}`,
      `container.rename ${slot} ses_1`,
    ]);
    expect(d.journal).toContain('blob.forget ses_1');
  });
});

/** A create as the runtime makes it: answered first, the rest of the claim under the lock. */
const createAnsweringFirst = (d: Doubles, sessionId = 'ses_1') =>
  d.locks.withLockAnsweringFirst(sessionId, (lock, later) =>
    createSandbox(d, lock, spec(sessionId), true, later),
  );

describe('a create answered before the claim is finished', () => {
  it('answers once the spec is recorded; the disk move and rename follow under the lock', async () => {
    const d = await withPool();
    const slot = slotOf(d);
    const member = await d.containers.find(`sbx-${slot}`);
    // The disk move takes its time (as its mount processes do).
    let moved!: () => void;
    const moving = new Promise<void>((resolve) => (moved = resolve));
    const adopt = d.workspaces.adopt.bind(d.workspaces);
    jest.spyOn(d.workspaces, 'adopt').mockImplementation(async (from, to) => {
      await moving;
      return adopt(from, to);
    });
    const info = await createAnsweringFirst(d);
    expect(info).toMatchObject({ status: 'running', containerId: member!.id });
    expect(steps(d, slot)).not.toContain(`workspace.adopt ${slot} ses_1`);
    // The session's next transition waits for the rest of the claim.
    const next = d.locks.withLock('ses_1', () => findSandbox(d, 'ses_1'));
    moved();
    const found = await next;
    expect(found?.id).toBe(member!.id);
    expect(steps(d, slot)).toContain(`workspace.adopt ${slot} ses_1`);
    expect(steps(d, slot)).toContain(`container.rename ${slot} ses_1`);
    expect(d.workspaces.disks.has('ses_1')).toBe(true);
  });

  it('makes the sandbox cold on the adopted disk when the rename fails after the answer', async () => {
    const d = await withPool();
    const slot = slotOf(d);
    const member = await d.containers.find(`sbx-${slot}`);
    d.containers.failRename = dockerError(500);
    expect((await createAnsweringFirst(d)).containerId).toBe(member!.id);
    const found = await d.locks.withLock('ses_1', () => findSandbox(d, 'ses_1'));
    expect(found?.running).toBe(true);
    expect(found?.id).not.toBe(member!.id);
    expect(await d.containers.find(member!.id)).toBeUndefined();
    expect(d.journal).not.toContain('workspace.destroy ses_1');
    expect(d.workspaces.disks.has('ses_1')).toBe(true);
  });

  it('discards the member and makes the sandbox cold when its disk cannot be adopted', async () => {
    const d = await withPool();
    const slot = slotOf(d);
    d.workspaces.disks.set('ses_1', { attaches: true }); // adopt refuses: the name is taken
    await createAnsweringFirst(d);
    const found = await d.locks.withLock('ses_1', () => findSandbox(d, 'ses_1'));
    expect(found?.running).toBe(true);
    expect(d.journal).toContain(`workspace.destroy ${slot}`);
    expect(d.journal).toContain('container.create ses_1');
  });
});

describe('a claimed sandbox later on', () => {
  it('is rebuilt, not restarted, when it stopped: its bind named the pool slot', async () => {
    const d = await withPool();
    await create(d);
    const claimed = await findSandbox(d, 'ses_1');
    d.containers.byName.get('sbx-ses_1')!.state.running = false;
    d.journal.length = 0;
    const healed = await d.locks.withLock('ses_1', async (lock) =>
      heal(d, lock, await findSandbox(d, 'ses_1')),
    );
    expect(healed?.running).toBe(true);
    expect(healed?.id).not.toBe(claimed?.id);
    expect(d.journal).toEqual(
      expect.arrayContaining(['container.remove ses_1', 'container.create ses_1']),
    );
    expect(d.journal).not.toContain('container.start ses_1');
    expect(d.journal).not.toContain('workspace.destroy ses_1');
  });

  it('is counted and reconciled by its name; unclaimed members are neither', async () => {
    const d = await withPool();
    await create(d);
    await d.pool.settled();
    expect(await countSandboxes(d)).toBe(1);
    d.containers.byName.get('sbx-ses_1')!.state.status = 'exited';
    d.containers.byName.get('sbx-ses_1')!.state.running = false;
    const result = await reconcile(d);
    expect(result.started).toEqual(['ses_1']);
    expect(await countSandboxes(d)).toBe(1);
  });
});
