import { requireRunning } from '../lifecycle/heal';
import { doubles, running, type Doubles } from '../lifecycle/in-memory-doubles';
import { reconcile } from '../lifecycle/reconcile';
import { destroySandbox } from '../lifecycle/remove-sandbox';
import { sandboxSpec } from '../lifecycle/test-fixtures';
import { forkSandboxes } from './fork-sandboxes';

/** Once the forks' starts, handed over after the answer under their locks, have ended. */
async function startsEnded(d: Doubles, ...sessionIds: string[]): Promise<void> {
  for (const id of sessionIds) await d.locks.withLock(id, () => Promise.resolve());
}

describe('forkSandboxes', () => {
  it('clones the disk once for every fork, then starts each fork on its clone', async () => {
    const d = doubles();
    await running(d, 'ses_src');
    const forked = await forkSandboxes(d, 'ses_src', [sandboxSpec('ses_a'), sandboxSpec('ses_b')]);
    await startsEnded(d, 'ses_a', 'ses_b');
    expect(forked.processesKept).toBe(false);
    expect(forked.sandboxes.map((info) => [info.sessionId, info.status])).toEqual([
      ['ses_a', 'running'],
      ['ses_b', 'running'],
    ]);
    expect(d.journal[0]).toBe('workspace.clone ses_src ses_a ses_b');
    expect(d.journal).toContain('container.create ses_a');
    expect(d.journal).toContain('container.create ses_b');
    expect(await d.specs.read('ses_b')).toEqual(sandboxSpec('ses_b'));
    // The source goes on as it was.
    expect((await d.containers.find('sbx-ses_src'))?.running).toBe(true);
  });

  it('forks an idle (paused) source too', async () => {
    const d = doubles();
    await running(d, 'ses_src');
    await d.containers.pause('sbx-ses_src');
    const forked = await forkSandboxes(d, 'ses_src', [sandboxSpec('ses_a')]);
    expect(forked.sandboxes[0]?.status).toBe('running');
  });

  it('refuses a source with no sandbox here as service_unavailable, making nothing', async () => {
    const d = doubles();
    await expect(forkSandboxes(d, 'ses_gone', [sandboxSpec('ses_a')])).rejects.toMatchObject({
      code: 'service_unavailable',
    });
    expect(d.journal).toEqual([]);
  });

  it('answers once the disks are cloned and the specs recorded; the first request waits for the start', async () => {
    const d = doubles();
    await running(d, 'ses_src');
    const forked = await forkSandboxes(d, 'ses_src', [sandboxSpec('ses_a')]);
    expect(forked.sandboxes[0]).toMatchObject({ sessionId: 'ses_a', status: 'running' });
    // Answered before the start, which holds the fork's lock.
    expect(await d.specs.read('ses_a')).toEqual(sandboxSpec('ses_a'));
    expect(d.journal).not.toContain('container.create ses_a');
    const info = await requireRunning(d, 'ses_a');
    expect(info.running).toBe(true);
    expect(d.journal).toContain('container.create ses_a');
  });
});

describe('forkSandboxes: failed starts and removals', () => {
  it('keeps a fork whose start failed, and starts it again at its next request', async () => {
    const d = doubles();
    await running(d, 'ses_src');
    d.containers.failCreate = new Error('docker said no');
    const forked = await forkSandboxes(d, 'ses_src', [sandboxSpec('ses_a')]);
    expect(forked.sandboxes).toHaveLength(1);
    await startsEnded(d, 'ses_a');
    expect(await d.containers.find('sbx-ses_a')).toBeUndefined();
    // Its disk and spec stay: its files are nowhere else.
    expect(d.workspaces.disks.has('ses_a')).toBe(true);
    expect(await d.specs.read('ses_a')).toBeDefined();
    expect((await requireRunning(d, 'ses_a')).running).toBe(true);
    expect(d.journal.filter((line) => line === 'container.create ses_a')).toHaveLength(2);
  });

  it('starts a fork whose start failed at the next reconcile, the other forks unharmed; a removal takes it whole', async () => {
    const d = doubles();
    await running(d, 'ses_src');
    d.containers.failCreate = new Error('docker said no'); // the first start only
    await forkSandboxes(d, 'ses_src', [sandboxSpec('ses_a'), sandboxSpec('ses_b')]);
    await startsEnded(d, 'ses_a', 'ses_b');
    const failed = (await d.containers.find('sbx-ses_a')) === undefined ? 'ses_a' : 'ses_b';
    const other = failed === 'ses_a' ? 'ses_b' : 'ses_a';
    expect((await d.containers.find(`sbx-${other}`))?.running).toBe(true);
    expect((await reconcile(d)).rebuilt).toEqual([failed]);
    expect((await d.containers.find(`sbx-${failed}`))?.running).toBe(true);
    expect(await destroySandbox(d, failed)).toBe(true);
    expect(d.workspaces.disks.has(failed)).toBe(false);
    expect(await d.specs.read(failed)).toBeUndefined();
    expect(await d.containers.find(`sbx-${failed}`)).toBeUndefined();
  });

  it('removes a fork still starting whole once its start ends', async () => {
    const d = doubles();
    await running(d, 'ses_src');
    await forkSandboxes(d, 'ses_src', [sandboxSpec('ses_a')]);
    expect(await destroySandbox(d, 'ses_a')).toBe(true);
    expect(d.journal.indexOf('container.create ses_a')).toBeLessThan(
      d.journal.indexOf('container.remove ses_a'),
    );
    expect(d.workspaces.disks.has('ses_a')).toBe(false);
    expect(await d.specs.read('ses_a')).toBeUndefined();
    expect(await d.containers.find('sbx-ses_a')).toBeUndefined();
    expect((await d.containers.find('sbx-ses_src'))?.running).toBe(true);
  });

  it('removes every fork, disks and specs included, when a spec cannot be recorded', async () => {
    const d = doubles();
    await running(d, 'ses_src');
    const write = d.specs.write.bind(d.specs);
    d.specs.write = (spec) =>
      spec.sessionId === 'ses_b' ? Promise.reject(new Error('disk full')) : write(spec);
    await expect(
      forkSandboxes(d, 'ses_src', [sandboxSpec('ses_a'), sandboxSpec('ses_b')]),
    ).rejects.toThrow('disk full');
    expect([...d.workspaces.disks.keys()]).toEqual(['ses_src']);
    expect(await d.specs.read('ses_a')).toBeUndefined();
    expect(await d.containers.find('sbx-ses_a')).toBeUndefined();
    expect(await d.containers.find('sbx-ses_b')).toBeUndefined();
  });

  it('starts no fork when the clone fails', async () => {
    const d = doubles();
    await running(d, 'ses_src');
    d.workspaces.failClone = true;
    await expect(forkSandboxes(d, 'ses_src', [sandboxSpec('ses_a')])).rejects.toThrow(
      'clone failed',
    );
    expect(d.journal.filter((line) => line.startsWith('container.create'))).toEqual([]);
    expect([...d.workspaces.disks.keys()]).toEqual(['ses_src']);
  });
});
