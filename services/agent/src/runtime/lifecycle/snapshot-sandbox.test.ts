import { createSandbox } from './create-sandbox';
import { doubles, running } from './in-memory-doubles';
import { snapshotSandbox } from './snapshot-sandbox';
import { sandboxSpec } from './test-fixtures';

const SNAP = 'snap_aaaaaaaaaaaaaaaaaaaaaaaa';

describe('snapshots', () => {
  it('freezes a running sandbox only while its files are packed, then thaws it', async () => {
    const d = doubles();
    await running(d, 'ses_1');
    const taken = await snapshotSandbox(d, 'ses_1', SNAP);
    expect(taken).toMatchObject({ bytes: 100, filesCount: 3, processesKept: false });
    expect(d.journal).toEqual([
      'container.pause ses_1',
      `blob.saveSnapshot ${SNAP}`,
      'container.unpause ses_1',
    ]);
    expect(d.blobs.snapshots.get(SNAP)).toBe(await d.workspaces.hostPath('ses_1'));
  });

  it('leaves an idle sandbox frozen, and refuses a session with no sandbox here', async () => {
    const d = doubles();
    await running(d, 'ses_1');
    await d.containers.pause((await d.containers.find('sbx-ses_1'))?.id ?? '');
    d.journal.length = 0;
    expect((await snapshotSandbox(d, 'ses_1', SNAP)).pausedMs).toBe(0);
    expect(d.journal).toEqual([`blob.saveSnapshot ${SNAP}`]);
    await expect(snapshotSandbox(d, 'ses_2', SNAP)).rejects.toMatchObject({
      code: 'session_not_found',
    });
  });

  it('thaws the sandbox even when packing fails', async () => {
    const d = doubles();
    await running(d, 'ses_1');
    d.blobs.saveSnapshot = (_id, hold) => hold(() => Promise.reject(new Error('tar failed')));
    await expect(snapshotSandbox(d, 'ses_1', SNAP)).rejects.toThrow('tar failed');
    expect(d.journal).toEqual(['container.pause ses_1', 'container.unpause ses_1']);
  });

  it("creates a session with a snapshot's files before its container starts", async () => {
    const d = doubles();
    d.blobs.snapshots.set(SNAP, '/somewhere');
    await d.locks.withLock('ses_2', (lock) =>
      createSandbox(d, lock, sandboxSpec('ses_2'), true, undefined, undefined, SNAP),
    );
    const restore = d.journal.findIndex((entry) => entry.startsWith('blob.restoreSnapshot'));
    expect(restore).toBeGreaterThan(d.journal.indexOf('workspace.create ses_2'));
    expect(restore).toBeLessThan(d.journal.indexOf('container.create ses_2'));
    // The snapshot is not recorded in the spec (a rebuild never restores it again).
    expect(await d.specs.read('ses_2')).toEqual(sandboxSpec('ses_2'));
  });

  it('removes the new disk when the snapshot is missing', async () => {
    const d = doubles();
    const create = d.locks.withLock('ses_2', (lock) =>
      createSandbox(d, lock, sandboxSpec('ses_2'), true, undefined, undefined, SNAP),
    );
    await expect(create).rejects.toMatchObject({ code: 'snapshot_not_found' });
    expect(d.workspaces.disks.has('ses_2')).toBe(false);
    expect(d.journal).not.toContain('container.create ses_2');
  });
});
