import { USER_CPU_PROCS } from '@sandbox/contract';
import type {
  ContainerClient,
  ContainerCreateOptions,
  ContainerLimits,
  ContainerSummary,
} from './container-client';
import type { CpuGroups } from './cpu-groups';
import { statusCode } from './docker-names';
import { ForwardingContainers } from './forwarding-containers';

/** The part of `CpuGroups` the containers use. */
export type CpuGroupStore = Pick<
  CpuGroups,
  'create' | 'setCpus' | 'remove' | 'exists' | 'collect' | 'close'
>;

/**
 * Sandboxes whose CPU limit binds the session's processes only: each container is made with a
 * CPU group of its own (`CpuGroups`) holding the session's limit, which its runner puts every
 * user process into; Docker's own limit on the container is the runner's allowance instead.
 * Callers see Docker's calls unchanged: the limits they pass are the session's.
 */
export class CpuSplitContainers extends ForwardingContainers {
  /** Groups made for containers being created: not leftovers yet. */
  private readonly creating = new Set<string>();
  /** The group of each container this agent made or looked up, by name and by id. */
  private readonly keys = new Map<string, string>();

  constructor(
    inner: ContainerClient,
    private readonly groups: CpuGroupStore,
    private readonly options: {
      /** The label that names a container's group. */
      label: string;
      /** Docker's CPU limit on each container: what the runner and its zygotes may use. */
      runnerNanoCpus: number;
    },
  ) {
    super(inner);
  }

  /** The label that keeps the CPUs a container's group was made with. */
  private get cpusLabel(): string {
    return `${this.options.label}-cpus`;
  }

  override async createAndStart(options: ContainerCreateOptions): Promise<string> {
    const key = options.name;
    if (key === undefined) throw new Error('a sandbox container needs a name');
    // gVisor's processes are not the host's: a runner there would write its own pids into the
    // host's group, naming host processes. Its Sentry stays under Docker's limit, whole.
    if (await this.inner.ownKernel(options.HostConfig?.Runtime)) {
      return this.inner.createAndStart(options);
    }
    const cpus = (options.HostConfig?.NanoCpus ?? 0) / 1e9;
    this.creating.add(key);
    try {
      const procs = await this.groups.create(key, cpus > 0 ? cpus : 1);
      const id = await this.inner.createAndStart({
        ...options,
        Labels: {
          ...options.Labels,
          [this.options.label]: key,
          [this.cpusLabel]: String(cpus),
        },
        HostConfig: {
          ...options.HostConfig,
          NanoCpus: this.options.runnerNanoCpus,
          Binds: [...(options.HostConfig?.Binds ?? []), `${procs}:${USER_CPU_PROCS}`],
        },
      });
      this.keys.set(key, key).set(id, key);
      return id;
    } catch (err) {
      // A name in use is another container's, and so is its group.
      if (statusCode(err) !== 409) await this.groups.remove(key);
      throw err;
    } finally {
      this.creating.delete(key);
    }
  }

  /** The group of `container` (a name or an id), from memory or its label. */
  private async keyOf(container: string): Promise<string | undefined> {
    const known = this.keys.get(container);
    if (known !== undefined) return known;
    const key = (await this.inner.find(container))?.labels[this.options.label];
    if (key !== undefined) this.keys.set(container, key);
    return key;
  }

  override async updateLimits(container: string, limits: ContainerLimits): Promise<void> {
    const key = await this.keyOf(container);
    if (key !== undefined) await this.groups.setCpus(key, limits.nanoCpus / 1e9);
    await this.inner.updateLimits(container, {
      ...limits,
      nanoCpus: key === undefined ? limits.nanoCpus : this.options.runnerNanoCpus,
    });
  }

  /** Removes the container, then its group (or leaves that to `collect` if it is still busy). */
  override async remove(container: string): Promise<boolean> {
    const key = await this.keyOf(container);
    const removed = await this.inner.remove(container);
    if (key === undefined) return removed;
    for (const [known, group] of this.keys) if (group === key) this.keys.delete(known);
    await this.groups.remove(key);
    return removed;
  }

  /**
   * Removes the groups no container of `containers` (this node's, from a listing) has, but
   * those being made now: what a crash or a busy removal left.
   */
  collect(containers: readonly ContainerSummary[]): Promise<string[]> {
    const live = new Set(this.creating);
    for (const container of containers) {
      const key = container.labels[this.options.label];
      if (key !== undefined) live.add(key);
    }
    return this.groups.collect(live);
  }

  /** At the agent's stop: the node's directory of groups goes if no sandbox is left. */
  close(): Promise<void> {
    return this.groups.close();
  }

  override async rename(container: string, name: string): Promise<void> {
    await this.inner.rename(container, name);
    const key = this.keys.get(container);
    if (key !== undefined) this.keys.set(name, key);
  }

  /**
   * Starts a stopped container, making its group again if a reboot took it (with the CPUs it
   * was made with: a claimed pool member, whose limits may have changed since, is rebuilt
   * rather than started).
   */
  override async start(container: string): Promise<void> {
    const labels = (await this.inner.find(container))?.labels ?? {};
    const key = labels[this.options.label];
    if (key !== undefined && !(await this.groups.exists(key))) {
      await this.groups.create(key, Number(labels[this.cpusLabel]) || 1);
    }
    await this.inner.start(container);
  }
}
