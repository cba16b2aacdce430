import { USER_CPU_PROCS } from '@sandbox/contract';
import { FakeContainers } from '../lifecycle/fake-containers';
import { dockerError } from '../lifecycle/test-fixtures';
import { CpuSplitContainers, type CpuGroupStore } from './cpu-split-containers';

const LABEL = 'io.sandbox.cpu-group';

/** Groups in memory: each one's CPUs, and every step taken. */
class FakeGroups implements CpuGroupStore {
  readonly cpus = new Map<string, number>();
  readonly steps: string[] = [];
  /** A create of this group waits for it, its group already made. */
  gate: { key: string; open: Promise<void> } | undefined;

  async create(key: string, cpus: number): Promise<string> {
    this.steps.push(`create ${key} ${cpus}`);
    this.cpus.set(key, cpus);
    if (this.gate?.key === key) await this.gate.open;
    return `/cg/${key}/cgroup.procs`;
  }
  setCpus(key: string, cpus: number): Promise<void> {
    this.steps.push(`set ${key} ${cpus}`);
    this.cpus.set(key, cpus);
    return Promise.resolve();
  }
  remove(key: string): Promise<boolean> {
    this.steps.push(`remove ${key}`);
    this.cpus.delete(key);
    return Promise.resolve(true);
  }
  exists(key: string): Promise<boolean> {
    return Promise.resolve(this.cpus.has(key));
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
  collect(live: ReadonlySet<string>): Promise<string[]> {
    const gone = [...this.cpus.keys()].filter((key) => !live.has(key));
    for (const key of gone) this.cpus.delete(key);
    return Promise.resolve(gone);
  }
}

function setup() {
  const docker = new FakeContainers([]);
  const groups = new FakeGroups();
  const containers = new CpuSplitContainers(docker, groups, {
    label: LABEL,
    runnerNanoCpus: 1e9,
  });
  const create = (name: string, cpus: number) =>
    containers.createAndStart({
      name,
      Labels: { 'io.sandbox.node': 'n1' },
      HostConfig: { NanoCpus: cpus * 1e9, Binds: ['/ws:/workspace'] },
    });
  return { docker, groups, containers, create };
}

describe('CpuSplitContainers', () => {
  it("makes each container with a group of the session's CPUs, Docker's limit the runner's", async () => {
    const { docker, groups, create } = setup();
    await create('sbx-ses_1', 0.25);
    const made = docker.byName.get('sbx-ses_1')!.options;
    expect(groups.cpus.get('sbx-ses_1')).toBe(0.25);
    expect(made.HostConfig?.NanoCpus).toBe(1e9);
    expect(made.HostConfig?.Binds).toEqual([
      '/ws:/workspace',
      `/cg/sbx-ses_1/cgroup.procs:${USER_CPU_PROCS}`,
    ]);
    expect(made.Labels).toEqual({
      'io.sandbox.node': 'n1',
      [LABEL]: 'sbx-ses_1',
      [`${LABEL}-cpus`]: '0.25',
    });
  });

  it('removes the group of a container that failed to start, not that of a name in use', async () => {
    const { docker, groups, create } = setup();
    docker.failCreate = dockerError(500);
    await expect(create('sbx-ses_1', 1)).rejects.toThrow();
    expect(groups.cpus.has('sbx-ses_1')).toBe(false);

    await create('sbx-ses_2', 1);
    await expect(create('sbx-ses_2', 0.5)).rejects.toMatchObject({ statusCode: 409 });
    expect(groups.steps).not.toContain('remove sbx-ses_2');
  });

  it("changes a renamed pool member's group, not Docker's CPU limit, when a claim asks", async () => {
    const { docker, groups, containers, create } = setup();
    await create('sbx-pool-1', 0.25);
    await containers.rename('sbx-pool-1', 'sbx-ses_1');
    await containers.updateLimits('sbx-ses_1', {
      memoryBytes: 2 ** 30,
      nanoCpus: 0.5e9,
      pidsLimit: 64,
    });
    expect(groups.cpus.get('sbx-pool-1')).toBe(0.5);
    expect((await docker.find('sbx-ses_1'))?.memoryBytes).toBe(2 ** 30);
  });

  it('removes the group with its container', async () => {
    const { groups, containers, create } = setup();
    await create('sbx-ses_1', 1);
    expect(await containers.remove('sbx-ses_1')).toBe(true);
    expect(groups.steps.at(-1)).toBe('remove sbx-ses_1');
    expect(await containers.remove('sbx-ses_1')).toBe(false);
  });

  it('makes a group again for a stopped container whose group a reboot took', async () => {
    const { groups, containers, create } = setup();
    await create('sbx-ses_1', 0.5);
    groups.cpus.clear();
    await containers.start('sbx-ses_1');
    expect(groups.cpus.get('sbx-ses_1')).toBe(0.5);
  });

  it('collects the groups of no listed container, but not one being made', async () => {
    const { docker, groups, containers, create } = setup();
    await create('sbx-ses_1', 1);
    groups.cpus.set('sbx-left', 1);
    let open = (): void => undefined;
    groups.gate = { key: 'sbx-making', open: new Promise((resolve) => (open = resolve)) };
    const making = create('sbx-making', 1);
    const removed = await containers.collect(await docker.listByLabel('io.sandbox.node', 'n1'));
    expect(removed).toEqual(['sbx-left']);
    open();
    await making;
    expect([...groups.cpus.keys()].sort()).toEqual(['sbx-making', 'sbx-ses_1']);
  });
});
