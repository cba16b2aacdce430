import { FakeContainers } from '../lifecycle/fake-containers';
import type { ContainerState } from './container-client';
import { hostTasksFor, OwnKernelContainers } from './own-kernel-containers';

/** Docker with one gVisor runtime: its containers run on a kernel of their own. */
class GvisorDocker extends FakeContainers {
  override ownKernel(runtime: string | undefined): Promise<boolean> {
    return Promise.resolve(runtime === 'gvisor');
  }

  override async find(container: string): Promise<ContainerState | undefined> {
    const state = await super.find(container);
    if (state === undefined) return undefined;
    const options = this.byName.get(container)?.options ?? {};
    return {
      ...state,
      ownKernel: options.HostConfig?.Runtime === 'gvisor',
      pidsLimit: state.pidsLimit || (options.HostConfig?.PidsLimit ?? 0),
    };
  }
}

const made = (runtime: string | undefined) => ({
  name: 'sbx-s1',
  Labels: { managed: 'true' },
  HostConfig: {
    PidsLimit: 128,
    Ulimits: [{ Name: 'nofile', Soft: 4096, Hard: 4096 }],
    ...(runtime === undefined ? {} : { Runtime: runtime }),
  },
});

describe('OwnKernelContainers', () => {
  it("makes a gVisor sandbox's process limit the user's RLIMIT_NPROC, the host's a multiple", async () => {
    const docker = new GvisorDocker([]);
    const containers = new OwnKernelContainers(docker, 'test.pids');
    await containers.createAndStart(made('gvisor'));
    const options = docker.byName.get('sbx-s1')?.options;
    expect(options?.HostConfig?.PidsLimit).toBe(hostTasksFor(128));
    expect(hostTasksFor(128)).toBeGreaterThan(128 * 10);
    expect(options?.HostConfig?.Ulimits).toEqual([
      { Name: 'nofile', Soft: 4096, Hard: 4096 },
      { Name: 'nproc', Soft: 128, Hard: 128 },
    ]);
    expect(options?.Labels).toMatchObject({ managed: 'true', 'test.pids': '128' });
    // Callers see the session's limit.
    expect((await containers.find('sbx-s1'))?.pidsLimit).toBe(128);
  });

  it("leaves other runtimes' containers as they are", async () => {
    const docker = new GvisorDocker([]);
    const containers = new OwnKernelContainers(docker, 'test.pids');
    await containers.createAndStart(made(undefined));
    const options = docker.byName.get('sbx-s1')?.options;
    expect(options?.HostConfig?.PidsLimit).toBe(128);
    expect(options?.HostConfig?.Ulimits).toEqual([{ Name: 'nofile', Soft: 4096, Hard: 4096 }]);
    await containers.updateLimits('sbx-s1', { memoryBytes: 1, nanoCpus: 1, pidsLimit: 64 });
    expect((await containers.find('sbx-s1'))?.pidsLimit).toBe(64);
  });

  it("refuses to change a gVisor sandbox's limits (runsc has no update)", async () => {
    const docker = new GvisorDocker([]);
    const containers = new OwnKernelContainers(docker, 'test.pids');
    await containers.createAndStart(made('gvisor'));
    await expect(
      containers.updateLimits('sbx-s1', { memoryBytes: 2, nanoCpus: 3, pidsLimit: 128 }),
    ).rejects.toThrow('fixed when it is made');
    expect((await docker.find('sbx-s1'))?.memoryBytes).toBe(0);
  });

  it('thaws a frozen gVisor sandbox before removing it', async () => {
    const journal: string[] = [];
    const docker = new GvisorDocker(journal);
    const containers = new OwnKernelContainers(docker, 'test.pids');
    await containers.createAndStart(made('gvisor'));
    await containers.pause('sbx-s1');
    journal.length = 0;
    expect(await containers.remove('sbx-s1')).toBe(true);
    expect(journal).toEqual(['container.unpause s1', 'container.remove s1']);
  });
});
