import { randomBytes } from 'node:crypto';
import { chown, mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { RUNNER_LINK_DIR, RUNNER_LINK_SOCKET } from '@sandbox/contract';
import type { ContainerClient, ContainerCreateOptions, ContainerSummary } from './container-client';
import { ForwardingContainers } from './forwarding-containers';

/** The longest path of a Unix socket (sun_path, with its terminating zero). */
const MAX_SOCKET_PATH = 107;

/** The name of a link directory: 16 hex digits. */
const LINK_NAME = /^[0-9a-f]{16}$/;

export interface RunnerLinkOptions {
  /** The host directory that holds every link directory of this node. */
  root: string;
  /** The label that names a container's link directory. */
  label: string;
  /** The host ids of a sandbox's root, which owns its link directory. */
  owner(): { uid: number; gid: number };
}

/**
 * Sandboxes whose runner speaks to the agent over a socket rather than through dockerd and
 * the container's shim (ADR 33). Each container is made with a link directory of its own on
 * the host, named in its label and bound read-only at RUNNER_LINK_DIR: owned by the sandbox's
 * root, mode 0700, so the sandbox user cannot even look in, and read-only, so nothing in the
 * sandbox can put a file or a link where the agent makes its socket. The directory goes with
 * its container. A sandbox on a kernel of its own (gVisor) has none: its runner speaks over its
 * exec stream, as one in a container made before links does.
 */
export class RunnerLinkContainers extends ForwardingContainers {
  /** Links made for containers being created: not leftovers yet. */
  private readonly creating = new Set<string>();

  constructor(
    inner: ContainerClient,
    private readonly options: RunnerLinkOptions,
  ) {
    super(inner);
  }

  /** Whether this node's paths leave room for a socket in a link directory. */
  get usable(): boolean {
    return this.dirOf('0'.repeat(16)).length + 1 + RUNNER_LINK_SOCKET.length <= MAX_SOCKET_PATH;
  }

  /** The host directory of the link named `name`. */
  dirOf(name: string): string {
    return join(this.options.root, name);
  }

  /**
   * The host directory a container's label names, if the label is a link's name (else
   * undefined): a label never leads the agent anywhere but into its own directory of links.
   */
  linkDir(label: string): string | undefined {
    return LINK_NAME.test(label) ? this.dirOf(label) : undefined;
  }

  override async createAndStart(options: ContainerCreateOptions): Promise<string> {
    if (!this.usable || (await this.inner.ownKernel(options.HostConfig?.Runtime))) {
      return this.inner.createAndStart(options);
    }
    const name = randomBytes(8).toString('hex');
    this.creating.add(name);
    try {
      await this.make(name);
      return await this.inner.createAndStart({
        ...options,
        Labels: { ...options.Labels, [this.options.label]: name },
        HostConfig: {
          ...options.HostConfig,
          Binds: [
            ...(options.HostConfig?.Binds ?? []),
            `${this.dirOf(name)}:${RUNNER_LINK_DIR}:ro`,
          ],
        },
      });
    } catch (err) {
      await rm(this.dirOf(name), { recursive: true, force: true });
      throw err;
    } finally {
      this.creating.delete(name);
    }
  }

  /** Removes the container, then its link directory. */
  override async remove(container: string): Promise<boolean> {
    const name = await this.nameOf(container);
    const removed = await this.inner.remove(container);
    if (name !== undefined) await rm(this.dirOf(name), { recursive: true, force: true });
    return removed;
  }

  /** Starts a stopped container, making its link directory again if something took it. */
  override async start(container: string): Promise<void> {
    const name = await this.nameOf(container);
    if (name !== undefined) await this.make(name);
    await this.inner.start(container);
  }

  /**
   * Removes the link directories no container of `containers` (this node's, from a listing)
   * names, but those being made now: what a crash left.
   */
  async collect(containers: readonly ContainerSummary[]): Promise<string[]> {
    const live = new Set(this.creating);
    for (const container of containers) {
      const name = container.labels[this.options.label];
      if (name !== undefined) live.add(name);
    }
    const names = await readdir(this.options.root).catch(() => [] as string[]);
    const removed = names.filter((name) => LINK_NAME.test(name) && !live.has(name));
    for (const name of removed) await rm(this.dirOf(name), { recursive: true, force: true });
    return removed;
  }

  /** The link directory `name`, the sandbox's root's alone (made again as it should be). */
  private async make(name: string): Promise<void> {
    await mkdir(this.options.root, { recursive: true, mode: 0o711 });
    const dir = this.dirOf(name);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const { uid, gid } = this.options.owner();
    await chown(dir, uid, gid);
  }

  private async nameOf(container: string): Promise<string | undefined> {
    const name = (await this.inner.find(container))?.labels[this.options.label];
    return name !== undefined && LINK_NAME.test(name) ? name : undefined;
  }
}
