import type {
  ContainerClient,
  ContainerCreateOptions,
  ContainerLimits,
  ContainerState,
} from './container-client';
import { ForwardingContainers } from './forwarding-containers';

/**
 * Host tasks gVisor's ptrace platform spends per process of the sandbox (a stub process and
 * stub threads for each), measured at about 10; and those of the Sentry, gofer and their Go
 * threads.
 */
const HOST_TASKS_PER_PROCESS = 16;
const HOST_TASKS_BASE = 512;

/** The host's task limit for a gVisor sandbox whose own process limit is `pids`. */
export function hostTasksFor(pids: number): number {
  return pids * HOST_TASKS_PER_PROCESS + HOST_TASKS_BASE;
}

/**
 * Sandboxes on a kernel of their own (gVisor, ADR 31) keep the session's process limit. The
 * host's pids cgroup counts gVisor's own tasks, about ten per sandbox process, and the Sentry
 * dies when a fork reaches it; so the session's limit becomes the sandbox user's RLIMIT_NPROC,
 * which the Sentry enforces, and the host's limit a multiple of it (`hostTasksFor`), a bound on
 * gVisor itself. Callers see the session's limit, as they do for every other sandbox. No limit
 * of a running gVisor sandbox can change (runsc has no `update`): other limits, another one.
 */
export class OwnKernelContainers extends ForwardingContainers {
  constructor(
    inner: ContainerClient,
    /** The label that keeps a container's process limit. */
    private readonly pidsLabel: string,
  ) {
    super(inner);
  }

  override async createAndStart(options: ContainerCreateOptions): Promise<string> {
    const pids = options.HostConfig?.PidsLimit ?? 0;
    if (pids <= 0 || !(await this.inner.ownKernel(options.HostConfig?.Runtime))) {
      return this.inner.createAndStart(options);
    }
    const ulimits = (options.HostConfig?.Ulimits ?? []).filter((u) => u.Name !== 'nproc');
    return this.inner.createAndStart({
      ...options,
      Labels: { ...options.Labels, [this.pidsLabel]: String(pids) },
      HostConfig: {
        ...options.HostConfig,
        PidsLimit: hostTasksFor(pids),
        Ulimits: [...ulimits, { Name: 'nproc', Soft: pids, Hard: pids }],
      },
    });
  }

  /** The session's process limit of an own-kernel container (kept in its label). */
  private pidsOf(state: ContainerState): number | undefined {
    if (!state.ownKernel) return undefined;
    const pids = Number(state.labels[this.pidsLabel]);
    return Number.isInteger(pids) && pids > 0 ? pids : undefined;
  }

  override async find(container: string): Promise<ContainerState | undefined> {
    const state = await this.inner.find(container);
    const pids = state === undefined ? undefined : this.pidsOf(state);
    return state === undefined || pids === undefined ? state : { ...state, pidsLimit: pids };
  }

  /**
   * Removes the container; a frozen gVisor sandbox is thawed first: its Sentry cannot be
   * killed while frozen, and Docker gives up on it after ten seconds ("is zombie").
   */
  override async remove(container: string): Promise<boolean> {
    const state = await this.inner.find(container);
    if (state?.ownKernel === true && state.paused) {
      await this.inner.unpause(container).catch(() => undefined);
    }
    return this.inner.remove(container);
  }

  /** runsc has no `update`: a gVisor sandbox keeps the limits it was made with. */
  override async updateLimits(container: string, limits: ContainerLimits): Promise<void> {
    const state = await this.inner.find(container);
    if (state?.ownKernel !== true) return this.inner.updateLimits(container, limits);
    throw new Error("a gVisor sandbox's limits are fixed when it is made");
  }
}
