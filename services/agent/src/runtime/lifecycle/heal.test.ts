import { doubles, type Doubles } from './in-memory-doubles';
import { heal, requireRunning } from './heal';
import { findSandbox } from './sandbox-info';
import { dockerError, sandboxSpec } from './test-fixtures';

const healNow = (d: Doubles, sessionId: string) =>
  d.locks.withLock(sessionId, async (lock) => heal(d, lock, await findSandbox(d, sessionId)));

describe('heal', () => {
  it('rebuilds a vanished container from its recorded spec on the kept disk', async () => {
    const d = doubles();
    await d.specs.write(sandboxSpec('ses_1'));
    d.workspaces.disks.set('ses_1', { attaches: true });
    d.journal.length = 0;
    const healed = await healNow(d, 'ses_1');
    expect(healed).toMatchObject({ running: true, paused: false });
    expect(d.journal).toContain('container.create ses_1');
    expect(d.workspaces.disks.has('ses_1')).toBe(true);
  });

  it('never removes the kept disk when the rebuild fails', async () => {
    const d = doubles();
    await d.specs.write(sandboxSpec('ses_1'));
    d.workspaces.disks.set('ses_1', { attaches: true });
    d.containers.failCreate = dockerError(500);
    await expect(healNow(d, 'ses_1')).rejects.toMatchObject({ code: 'service_unavailable' });
    expect(d.journal).not.toContain('workspace.destroy ses_1');
    expect(d.workspaces.disks.has('ses_1')).toBe(true);
  });

  it('does not rebuild a session without a spec, a sleeping one, or one whose disk is gone', async () => {
    const d = doubles();
    d.workspaces.disks.set('no-spec', { attaches: true });
    await d.specs.write(sandboxSpec('asleep'));
    d.workspaces.disks.set('asleep', { attaches: true });
    await d.blobs.save('asleep');
    await d.specs.write(sandboxSpec('no-disk'));
    d.journal.length = 0;
    for (const sessionId of ['no-spec', 'asleep', 'no-disk']) {
      expect(await healNow(d, sessionId)).toBeUndefined();
    }
    expect(d.journal).toEqual([]);
  });

  it('starts a stopped container again when its spec exists and its disk attaches', async () => {
    const d = doubles();
    d.containers.put('ses_1', 'exited');
    await d.specs.write(sandboxSpec('ses_1'));
    d.workspaces.disks.set('ses_1', { attaches: true });
    expect(await healNow(d, 'ses_1')).toMatchObject({ running: true });
    expect(d.journal).toContain('container.start ses_1');
  });

  it('leaves a stopped container of a session being destroyed (no spec) stopped', async () => {
    const d = doubles();
    d.containers.put('ses_1', 'exited');
    d.workspaces.disks.set('ses_1', { attaches: true });
    expect(await healNow(d, 'ses_1')).toBeUndefined();
    expect(d.journal).not.toContain('container.start ses_1');
  });

  it('leaves a stopped container whose disk does not attach stopped', async () => {
    const d = doubles();
    d.containers.put('ses_1', 'exited');
    await d.specs.write(sandboxSpec('ses_1'));
    d.workspaces.disks.set('ses_1', { attaches: false });
    expect(await healNow(d, 'ses_1')).toBeUndefined();
    expect(d.journal).not.toContain('container.start ses_1');
  });
});

describe('requireRunning', () => {
  it('returns a running container as it is', async () => {
    const d = doubles();
    const running = d.containers.put('ses_1', 'running');
    expect((await requireRunning(d, 'ses_1')).id).toBe(running.id);
    expect(d.journal).toEqual([]);
  });

  it('waits for work handed over after an answer (a start and its egress policy) before using a running container', async () => {
    const d = doubles();
    d.containers.put('ses_1', 'running');
    let finish!: () => void;
    await d.locks.withLockAnsweringFirst('ses_1', (_lock, later) => {
      later(() => new Promise<void>((resolve) => (finish = resolve)));
      return Promise.resolve();
    });
    let served = false;
    const request = requireRunning(d, 'ses_1').then(() => (served = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(served).toBe(false);
    finish();
    await request;
    expect(served).toBe(true);
  });

  it('thaws a paused (idle) sandbox', async () => {
    const d = doubles();
    d.containers.put('ses_1', 'paused');
    expect(await requireRunning(d, 'ses_1')).toMatchObject({ running: true, paused: false });
    expect(d.journal).toEqual(['container.unpause ses_1']);
  });

  it('wakes a session a deep sleep saved and removed after a request saw it awake', async () => {
    const d = doubles();
    await d.specs.write(sandboxSpec('ses_1'));
    await d.blobs.save('ses_1');
    d.journal.length = 0;
    expect(await requireRunning(d, 'ses_1')).toMatchObject({ running: true, paused: false });
    expect(d.journal).toEqual(
      expect.arrayContaining(['blob.restore ses_1', 'container.create ses_1']),
    );
    expect(await d.blobs.manifest('ses_1')).toBeUndefined();
  });

  it('answers session_not_found when there is nothing to bring back', async () => {
    const d = doubles();
    await expect(requireRunning(d, 'ses_1')).rejects.toMatchObject({
      code: 'session_not_found',
      details: { sessionId: 'ses_1' },
    });
  });
});
