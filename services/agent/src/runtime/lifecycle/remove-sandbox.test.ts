import { doubles } from './in-memory-doubles';
import { destroySandbox } from './remove-sandbox';
import { sandboxSpec } from './test-fixtures';

describe('destroySandbox', () => {
  it('removes the spec first, then the saved copy, then the container and its workspace', async () => {
    const d = doubles();
    await d.specs.write(sandboxSpec('ses_1'));
    d.workspaces.disks.set('ses_1', { attaches: true });
    d.containers.put('ses_1', 'running');
    d.journal.length = 0;
    expect(await destroySandbox(d, 'ses_1')).toBe(true);
    expect(d.journal).toEqual([
      'spec.remove ses_1',
      'blob.remove ses_1',
      'blob.removeLogs ses_1',
      'runner.close ses_1',
      'container.remove ses_1',
      'workspace.destroy ses_1',
    ]);
    expect(await d.containers.find('sbx-ses_1')).toBeUndefined();
    expect(d.workspaces.disks.has('ses_1')).toBe(false);
  });

  it('reports that something existed when only a saved copy did', async () => {
    const d = doubles();
    await d.blobs.save('ses_1');
    expect(await destroySandbox(d, 'ses_1')).toBe(true);
    expect(d.blobs.saved.has('ses_1')).toBe(false);
  });

  it('reports that nothing existed for an unknown session', async () => {
    const d = doubles();
    expect(await destroySandbox(d, 'ses_1')).toBe(false);
  });
});
