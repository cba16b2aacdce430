import { sandboxLabels } from '../docker/container-spec';
import { CURRENT_IMAGE_ID } from './fake-containers';
import { doubles, type Doubles } from './in-memory-doubles';
import { countSandboxes, reconcile } from './reconcile';
import { sandboxSpec, testConfig } from './test-fixtures';

/** A sandbox this node made: its spec, its disk, and its container in `status`. */
async function made(d: Doubles, sessionId: string, status: string | undefined): Promise<void> {
  const spec = sandboxSpec(sessionId);
  await d.specs.write(spec);
  d.workspaces.disks.set(sessionId, { attaches: true });
  if (status !== undefined) d.containers.put(sessionId, status, sandboxLabels(spec, testConfig));
}

describe('reconcile', () => {
  it('starts exited containers and rebuilds missing ones, leaving the rest alone', async () => {
    const d = doubles();
    await made(d, 'exited', 'exited');
    await made(d, 'created', 'created');
    await made(d, 'gone', undefined);
    await made(d, 'running', 'running');
    await made(d, 'paused', 'paused');
    d.journal.length = 0;

    const report = await reconcile(d);
    expect(report.started.sort()).toEqual(['created', 'exited']);
    expect(report.rebuilt).toEqual(['gone']);
    expect(d.journal.sort()).toEqual([
      'container.create gone',
      'container.start created',
      'container.start exited',
      'runner.close created',
      'runner.close exited',
      'runner.warmUp gone',
      'spec.write gone',
      'workspace.create gone',
    ]);
    expect((await d.containers.find('sbx-paused'))?.paused).toBe(true);
    expect(await reconcile(d)).toEqual({ started: [], rebuilt: [] });
  });

  it('does not bring back a sleeping session, and goes on past one that fails', async () => {
    const d = doubles();
    await made(d, 'asleep', undefined);
    await d.blobs.save('asleep');
    await made(d, 'broken', undefined);
    await made(d, 'fine', undefined);
    d.workspaces.attach = (sessionId) =>
      sessionId === 'broken' ? Promise.reject(new Error('mount failed')) : Promise.resolve(true);
    expect(await reconcile(d)).toEqual({ started: [], rebuilt: ['fine'] });
  });

  it('leaves alone a sandbox brought back while it waited for the lock', async () => {
    const d = doubles();
    await made(d, 'ses_1', undefined);
    let wake!: () => void;
    // A wake from deep sleep holds the lock, and its container runs when it lets go.
    const waking = d.locks.withLock('ses_1', async () => {
      await new Promise<void>((resolve) => (wake = resolve));
      d.containers.put('ses_1', 'running', sandboxLabels(sandboxSpec('ses_1'), testConfig));
    });
    const pass = reconcile(d);
    await new Promise((resolve) => setImmediate(resolve));
    wake();
    await waking;
    d.journal.length = 0;
    expect(await pass).toEqual({ started: [], rebuilt: [] });
    expect(d.journal).toEqual([]);
  });
});

describe("reconcile at the agent's start: sandboxes of another image", () => {
  it("recreates, at the agent's start, the sandboxes of another image on its own, on their disks", async () => {
    const d = doubles();
    await made(d, 'old-running', 'running');
    await made(d, 'old-paused', 'paused');
    await made(d, 'old-exited', 'exited');
    await made(d, 'current', 'running');
    await made(d, 'old-destroyed', 'running');
    await d.specs.remove('old-destroyed');
    for (const id of ['old-running', 'old-paused', 'old-exited', 'old-destroyed']) {
      d.containers.setImage(id, 'sha256:before-the-change');
    }
    const kept = (await d.containers.find('sbx-current'))?.id;
    d.journal.length = 0;

    // A later pass leaves them alone: only the one at start recreates.
    expect(await reconcile(d)).toEqual({ started: ['old-exited'], rebuilt: [] });
    d.containers.setImage('old-exited', 'sha256:before-the-change');
    d.journal.length = 0;

    const report = await reconcile(d, { renew: true });
    expect(report.rebuilt.sort()).toEqual(['old-exited', 'old-paused', 'old-running']);
    expect(report.started).toEqual([]);
    for (const id of ['old-running', 'old-paused', 'old-exited']) {
      expect(d.journal).toEqual(
        expect.arrayContaining([
          `container.remove ${id}`,
          `container.create ${id}`,
          `workspace.create ${id}`,
        ]),
      );
      const listed = await d.containers.listByLabel('io.sandbox.node', testConfig.nodeId);
      expect(listed.find((c) => c.name === `sbx-${id}`)).toMatchObject({
        state: 'running',
        imageId: CURRENT_IMAGE_ID,
      });
    }
    // No disk removed; the current one and the one being destroyed untouched.
    expect(d.journal.filter((entry) => entry.startsWith('workspace.destroy'))).toEqual([]);
    expect(d.journal.filter((entry) => /current|old-destroyed/.test(entry))).toEqual([]);
    expect((await d.containers.find('sbx-current'))?.id).toBe(kept);
    expect(await reconcile(d, { renew: true })).toEqual({ started: [], rebuilt: [] });
  });

  it('recreates nothing when the agent cannot tell its image', async () => {
    const d = doubles();
    await made(d, 'old', 'running');
    d.containers.setImage('old', 'sha256:before-the-change');
    d.containers.inspectImage = () => Promise.reject(new Error('no such image'));
    d.journal.length = 0;
    expect(await reconcile(d, { renew: true })).toEqual({ started: [], rebuilt: [] });
    expect(d.journal).toEqual([]);
  });

  it("counts only this node's containers", async () => {
    const d = doubles();
    await made(d, 'ours', 'running');
    d.containers.put('theirs', 'running', { 'io.sandbox.node': 'node-2' });
    expect(await countSandboxes(d)).toBe(1);
  });
});
