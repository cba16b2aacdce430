import { DockerRuntime, type DockerRuntimeParts } from './docker-runtime';
import { doubles, sandboxSpec } from './lifecycle/in-memory-doubles';
import { RequestLoad } from './request-load';

describe('DockerRuntime', () => {
  it('counts a wake from deep sleep as a request served while it restores', async () => {
    const d = doubles();
    const load = new RequestLoad();
    await d.blobs.save('ses_1');
    const busyDuringRestore: boolean[] = [];
    const restore = d.blobs.restore.bind(d.blobs);
    d.blobs.restore = (sessionId: string) => {
      busyDuringRestore.push(load.busy());
      return restore(sessionId);
    };
    // Only the lifecycle's parts are used by a restore.
    const runtime = new DockerRuntime({ ...d, load } as unknown as DockerRuntimeParts);

    await runtime.restore(sandboxSpec('ses_1'));

    expect(busyDuringRestore).toEqual([true]);
    expect(load.busy()).toBe(false);
  });
});
