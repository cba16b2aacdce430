import { SessionUse } from '../session-use';
import { hibernateSandbox, restoreSandbox } from './deep-sleep';
import { doubles, running, type Doubles } from './in-memory-doubles';
import { destroySandbox } from './remove-sandbox';
import { sandboxSpec } from './test-fixtures';

/** What hibernating the doubles' session answers: its 3 files of 100 bytes saved, not in use. */
const hibernated = (keptDisk: boolean) => ({ filesCount: 3, bytes: 100, inUse: false, keptDisk });

/**
 * Holds `d.blobs[step]` when it is called: it notes `<step> begins` in the journal and goes on
 * once the function returned here is called.
 */
function held(d: Doubles, step: 'save' | 'remove'): () => void {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const original: (sessionId: string) => Promise<unknown> = d.blobs[step].bind(d.blobs);
  Object.assign(d.blobs, {
    [step]: async (sessionId: string) => {
      d.journal.push(`${step} begins`);
      await released;
      return original(sessionId);
    },
  });
  return release;
}

/** The doubles, their deep sleep archiving the workspace (the default) or keeping its disk. */
function sleepingBy(deepSleep: 'archive' | 'disk'): Doubles {
  const d = doubles();
  return { ...d, config: { ...d.config, deepSleep } };
}

describe('hibernateSandbox', () => {
  it('leaves a session in use as it is: nothing paused, saved or removed', async () => {
    const d = doubles();
    await running(d, 'ses_1');
    const use = new SessionUse();
    await use.track('ses_1', () => Promise.resolve());
    expect(await hibernateSandbox(d, 'ses_1', { use, unusedForMs: 60_000 })).toEqual({
      filesCount: 0,
      bytes: 0,
      inUse: true,
      keptDisk: false,
    });
    expect(d.journal).toEqual([]);
  });

  it('evacuates a session in use (a drain): saved and removed all the same', async () => {
    const d = doubles();
    await running(d, 'ses_1');
    const use = new SessionUse();
    await use.track('ses_1', () => Promise.resolve());
    expect(
      await hibernateSandbox(d, 'ses_1', { use, unusedForMs: 60_000 }, { evacuate: true }),
    ).toMatchObject({ inUse: false, keptDisk: false });
    expect(d.journal).toContain('blob.save ses_1');
    expect(d.journal).toContain('container.remove ses_1');
  });

  it('gives up when a request comes while the workspace is saved: copy removed, sandbox thawed', async () => {
    const d = doubles();
    await running(d, 'ses_1');
    const use = new SessionUse();
    const save = d.blobs.save.bind(d.blobs);
    let finish!: () => void;
    let request: Promise<void> | undefined;
    d.blobs.save = (sessionId, ...rest) => {
      // The request waits for the frozen sandbox, as a run would.
      request = use.track('ses_1', () => new Promise<void>((resolve) => (finish = resolve)));
      return save(sessionId, ...rest);
    };
    expect(await hibernateSandbox(d, 'ses_1', { use, unusedForMs: 0 })).toMatchObject({
      inUse: true,
    });
    finish();
    await request;
    expect(d.journal).toEqual([
      'container.pause ses_1',
      'blob.save ses_1',
      'blob.remove ses_1',
      'container.unpause ses_1',
    ]);
    expect(await d.blobs.manifest('ses_1')).toBeUndefined();
    expect((await d.containers.find('sbx-ses_1'))?.paused).toBe(false);
  });
});

describe('hibernateSandbox of a sandbox at rest', () => {
  it.each([
    {
      case: 'pauses the sandbox, saves its workspace, then removes it',
      deepSleep: 'archive' as const,
      steps: [
        'container.pause ses_1',
        'blob.save ses_1',
        'runner.close ses_1',
        'container.remove ses_1',
        'workspace.destroy ses_1',
      ],
      keptDisk: false,
    },
    {
      case: 'keeping the disk (SANDBOX_DEEP_SLEEP=disk): removes the container only, a manifest says so',
      deepSleep: 'disk' as const,
      steps: [
        'container.pause ses_1',
        'blob.keepDisk ses_1',
        'runner.close ses_1',
        'container.remove ses_1',
      ],
      keptDisk: true,
    },
  ])('$case', async ({ deepSleep, steps, keptDisk }) => {
    const d = sleepingBy(deepSleep);
    await running(d, 'ses_1');
    expect(await hibernateSandbox(d, 'ses_1')).toEqual(hibernated(keptDisk));
    expect(d.journal).toEqual(steps);
    // The saved copy, or the manifest of the kept disk.
    expect(d.blobs.saved.has('ses_1')).toBe(true);
    expect(d.workspaces.disks.has('ses_1')).toBe(keptDisk);
  });

  it('refuses when the disk does not attach, saving and removing nothing', async () => {
    const d = doubles();
    await running(d, 'ses_1');
    d.workspaces.disks.set('ses_1', { attaches: false });
    await expect(hibernateSandbox(d, 'ses_1')).rejects.toMatchObject({
      code: 'service_unavailable',
      retryAfter: 30,
    });
    expect(d.journal).toEqual(['container.pause ses_1']);
    expect(await d.containers.find('sbx-ses_1')).toBeDefined();
  });

  it('answers with the saved copy when asleep already, and 404 when there is nothing', async () => {
    const d = doubles();
    await d.blobs.save('ses_1');
    d.journal.length = 0;
    expect(await hibernateSandbox(d, 'ses_1')).toEqual(hibernated(false));
    expect(d.journal).toEqual([]);
    await expect(hibernateSandbox(d, 'ses_2')).rejects.toMatchObject({
      code: 'session_not_found',
    });
  });
});

describe('restoreSandbox', () => {
  it('refuses without a saved copy, making nothing', async () => {
    const d = doubles();
    await expect(restoreSandbox(d, sandboxSpec('ses_1'))).rejects.toMatchObject({
      code: 'session_not_found',
    });
    expect(d.journal).toEqual([]);
  });

  it('restores the workspace before the container, and removes the saved copy after', async () => {
    const d = doubles();
    await d.blobs.save('ses_1');
    d.journal.length = 0;
    const info = await restoreSandbox(d, sandboxSpec('ses_1'));
    expect(info).toMatchObject({ sessionId: 'ses_1', status: 'running' });
    const step = (name: string) => d.journal.indexOf(name);
    expect(step('workspace.destroy ses_1')).toBe(0);
    expect(step('workspace.create ses_1')).toBe(1);
    expect(step('blob.restore ses_1')).toBeGreaterThan(step('workspace.create ses_1'));
    expect(step('container.create ses_1')).toBeGreaterThan(step('blob.restore ses_1'));
    expect(step('blob.forget ses_1')).toBeGreaterThan(step('container.create ses_1'));
    expect(d.blobs.saved.has('ses_1')).toBe(false);
    await d.locks.withLock('ses_1', () => Promise.resolve()); // what was queued before
    expect(step('blob.remove ses_1')).toBeGreaterThan(step('blob.forget ses_1'));
    expect(d.blobs.unnamed.has('ses_1')).toBe(false);
  });

  it('answers before deleting the archive, which goes before any later step', async () => {
    const d = doubles();
    await d.blobs.save('ses_1');
    const finishRemove = held(d, 'remove');

    expect((await restoreSandbox(d, sandboxSpec('ses_1'))).status).toBe('running');
    expect(await d.blobs.manifest('ses_1')).toBeUndefined();

    const sleeping = hibernateSandbox(d, 'ses_1');
    await new Promise((resolve) => setImmediate(resolve));
    expect(d.journal).toContain('remove begins');
    expect(d.journal).not.toContain('container.pause ses_1');
    finishRemove();
    await sleeping;
    expect(d.journal.indexOf('container.pause ses_1')).toBeGreaterThan(
      d.journal.indexOf('blob.remove ses_1'),
    );
  });
});

describe('restoreSandbox when a step fails or is cut short', () => {
  it('keeps the saved copy when the container cannot start', async () => {
    const d = doubles();
    await d.blobs.save('ses_1');
    d.containers.failCreate = new Error('no');
    await expect(restoreSandbox(d, sandboxSpec('ses_1'))).rejects.toMatchObject({
      code: 'service_unavailable',
    });
    expect(d.blobs.saved.has('ses_1')).toBe(true);
  });

  it('restores onto an empty disk when one was left for the session', async () => {
    const d = doubles();
    await d.blobs.save('ses_1');
    d.workspaces.disks.set('ses_1', { attaches: true }); // a save's disk that was not removed
    d.journal.length = 0;
    await restoreSandbox(d, sandboxSpec('ses_1'));
    expect(d.journal.slice(0, 3)).toEqual([
      'workspace.destroy ses_1',
      'workspace.create ses_1',
      'blob.restore ses_1',
    ]);
  });

  it('removes the disk of a restore that failed, and keeps the saved copy', async () => {
    const d = doubles();
    await d.blobs.save('ses_1');
    d.blobs.failRestore = new Error('The saved workspace is corrupt');
    d.journal.length = 0;
    await expect(restoreSandbox(d, sandboxSpec('ses_1'))).rejects.toThrow(/corrupt/);
    expect(d.journal).toEqual([
      'workspace.destroy ses_1',
      'workspace.create ses_1',
      'blob.restore ses_1',
      'workspace.destroy ses_1',
    ]);
    expect(d.workspaces.disks.has('ses_1')).toBe(false);
    expect(d.blobs.saved.has('ses_1')).toBe(true);
  });

  it('answers with the running sandbox, thawed, when it is awake', async () => {
    const d = doubles();
    await running(d, 'ses_1');
    await d.containers.pause('sbx-ses_1');
    const info = await restoreSandbox(d, sandboxSpec('ses_1'));
    expect(info.status).toBe('running');
    expect(d.journal).not.toContain('blob.restore ses_1');
  });

  it('drops the saved copy of a wake cut short after its sandbox started', async () => {
    const d = doubles();
    await running(d, 'ses_1');
    await d.blobs.save('ses_1'); // the crash came between the start and the copy's removal
    const info = await restoreSandbox(d, sandboxSpec('ses_1'));
    expect(info.status).toBe('running');
    expect(d.blobs.saved.has('ses_1')).toBe(false);
    expect(d.journal).not.toContain('blob.restore ses_1');
  });
});

describe('transitions of one session', () => {
  it('never overlap: a destroy waits for a deep-sleep save to finish', async () => {
    const d = doubles();
    await running(d, 'ses_1');
    const finishSave = held(d, 'save');
    const sleeping = hibernateSandbox(d, 'ses_1');
    const destroying = destroySandbox(d, 'ses_1');
    await new Promise((resolve) => setImmediate(resolve));
    expect(d.journal).toEqual(['container.pause ses_1', 'save begins']);
    finishSave();
    await sleeping;
    await destroying;
    expect(d.journal.indexOf('spec.remove ses_1')).toBeGreaterThan(
      d.journal.indexOf('blob.save ses_1'),
    );
  });
});

describe('deep sleep that keeps the disk (SANDBOX_DEEP_SLEEP=disk)', () => {
  const keeping = () => sleepingBy('disk');

  it('answers again with the disk it kept, doing nothing (idempotent)', async () => {
    const d = keeping();
    await running(d, 'ses_1');
    await hibernateSandbox(d, 'ses_1');
    d.journal.length = 0;
    expect(await hibernateSandbox(d, 'ses_1')).toMatchObject({ filesCount: 3, inUse: false });
    expect(d.journal).toEqual([]);
  });

  it('wakes as a new container on the kept disk: nothing unpacked, nothing destroyed', async () => {
    const d = keeping();
    await running(d, 'ses_1');
    await hibernateSandbox(d, 'ses_1');
    d.journal.length = 0;
    const info = await restoreSandbox(d, sandboxSpec('ses_1'));
    expect(info).toMatchObject({ sessionId: 'ses_1', status: 'running' });
    expect(d.journal).not.toContain('blob.restore ses_1');
    expect(d.journal).not.toContain('workspace.destroy ses_1');
    expect(d.journal).toContain('container.create ses_1');
    expect(d.blobs.saved.has('ses_1')).toBe(false);
    expect(d.workspaces.disks.has('ses_1')).toBe(true);
  });

  it('archives a workspace smaller than the threshold (it wakes sooner onto a pool member)', async () => {
    const d = keeping();
    const small = { ...d, config: { ...d.config, deepSleepDiskMinBytes: 1000 } };
    await running(small, 'ses_1');
    await hibernateSandbox(small, 'ses_1');
    expect(small.journal).toContain('blob.save ses_1');
    expect(small.journal).toContain('workspace.destroy ses_1');
    d.blobs.inUse = 1000;
    await running(d, 'ses_2');
    await hibernateSandbox(small, 'ses_2');
    expect(small.journal).toContain('blob.keepDisk ses_2');
  });

  it('archives an evacuated session all the same: another node must be able to wake it', async () => {
    const d = keeping();
    await running(d, 'ses_1');
    expect(await hibernateSandbox(d, 'ses_1', undefined, { evacuate: true })).toMatchObject({
      keptDisk: false,
    });
    expect(d.journal).toContain('blob.save ses_1');
    expect(d.journal).not.toContain('blob.keepDisk ses_1');
    expect(d.workspaces.disks.has('ses_1')).toBe(false);
  });

  it('removes the kept disk with the session', async () => {
    const d = keeping();
    await running(d, 'ses_1');
    await hibernateSandbox(d, 'ses_1');
    await destroySandbox(d, 'ses_1');
    expect(d.workspaces.disks.has('ses_1')).toBe(false);
    expect(await d.blobs.manifest('ses_1')).toBeUndefined();
  });
});
