import { doubles, running } from '../lifecycle/in-memory-doubles';
import { sandboxSpec } from '../lifecycle/test-fixtures';
import { forkSandboxes } from './fork-sandboxes';

describe('forkSandboxes', () => {
  it('clones the disk once for every fork, then starts each fork on its clone', async () => {
    const d = doubles();
    await running(d, 'ses_src');
    const forked = await forkSandboxes(d, 'ses_src', [sandboxSpec('ses_a'), sandboxSpec('ses_b')]);
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

  it('removes every fork, disks and specs included, when one fails to start', async () => {
    const d = doubles();
    await running(d, 'ses_src');
    d.containers.failCreate = new Error('docker said no');
    await expect(
      forkSandboxes(d, 'ses_src', [sandboxSpec('ses_a'), sandboxSpec('ses_b')]),
    ).rejects.toBeDefined();
    expect([...d.workspaces.disks.keys()]).toEqual(['ses_src']);
    expect(await d.specs.read('ses_a')).toBeUndefined();
    expect(await d.specs.read('ses_b')).toBeUndefined();
    expect(await d.containers.find('sbx-ses_a')).toBeUndefined();
    expect(await d.containers.find('sbx-ses_b')).toBeUndefined();
    expect((await d.containers.find('sbx-ses_src'))?.running).toBe(true);
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
