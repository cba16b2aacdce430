import type { Logger } from '@sandbox/logger';
import type { ContainerClient, ContainerCreateOptions } from './container-client';
import { hostCommands } from '../host-commands';
import { ForwardingContainers } from './forwarding-containers';

/** inotify instances one sandbox may hold (the kernel's default for a user). */
export const INOTIFY_INSTANCES_PER_SANDBOX = 128;
/** inotify watches one sandbox may hold (each charged to its memory limit). */
export const INOTIFY_WATCHES_PER_SANDBOX = 65536;

/** Writes the limits of the user namespace it runs in (as root of it: nsenter --user). */
const WRITE_LIMITS =
  'echo "$1" > /proc/sys/user/max_inotify_instances && echo "$2" > /proc/sys/user/max_inotify_watches';

/**
 * Sets the user namespace of `pid` to the per-sandbox limits. The host's root enters it
 * (nsenter --user only: no mount or pid namespace) and so holds every capability there; the
 * sandbox's own root does not (it lacks CAP_SYS_RESOURCE, and its /proc/sys is read-only).
 */
export async function limitSandboxUserNamespace(pid: number): Promise<void> {
  await hostCommands.run([
    'nsenter',
    `--target=${pid}`,
    '--user',
    '--',
    'sh',
    '-c',
    WRITE_LIMITS,
    'limits',
    String(INOTIFY_INSTANCES_PER_SANDBOX),
    String(INOTIFY_WATCHES_PER_SANDBOX),
  ]);
}

/**
 * Under the engine's user-namespace remapping every sandbox's user is one host uid, and the
 * kernel counts inotify instances and watches per uid of the host: one sandbox holding its
 * 128 instances (a few dev servers) would leave none for every other sandbox of the node.
 * Each container has a user namespace of its own, whose limits the kernel also enforces (it
 * charges every namespace up the chain): each started container's namespace gets a sandbox's
 * share (`limitSandboxUserNamespace`), and the host's own limits make room for all of them
 * (`ensureHostQuotas`). Sandboxes on a kernel of their own (gVisor) use none of the host's.
 * Without remapping, containers share the host's namespace: nothing to set apart.
 */
export class SandboxUserLimits extends ForwardingContainers {
  constructor(
    inner: ContainerClient,
    /** Whether the engine remaps user namespaces (learned when the host is prepared). */
    private readonly remapped: () => boolean,
    private readonly logger: Logger,
    private readonly limit: (pid: number) => Promise<void> = limitSandboxUserNamespace,
  ) {
    super(inner);
  }

  override async createAndStart(options: ContainerCreateOptions): Promise<string> {
    const id = await this.inner.createAndStart(options);
    // Known from the runtime asked for: nothing more is asked of Docker for a gVisor sandbox.
    if (!this.remapped() || (await this.inner.ownKernel(options.HostConfig?.Runtime))) return id;
    await this.limitNamespaceOf(id);
    return id;
  }

  override async start(container: string): Promise<void> {
    await this.inner.start(container);
    await this.limitNamespaceOf(container);
  }

  /**
   * A container whose namespace could not be limited still serves its session (logged): its
   * user then shares the host's limits with the other sandboxes, as without remapping.
   */
  private async limitNamespaceOf(container: string): Promise<void> {
    if (!this.remapped()) return;
    const state = await this.inner.find(container);
    if (state === undefined || !state.running || state.ownKernel || state.pid <= 0) return;
    await this.limit(state.pid).catch((err: unknown) => {
      this.logger.error(
        { err, container },
        "could not limit the sandbox's user namespace (inotify): it shares the host's limits",
      );
    });
  }
}
