import { chmod, chown, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { SANDBOX_GID, SANDBOX_UID } from '@sandbox/contract';
import { AppError } from '@sandbox/errors';

/** What of `docker info` tells whether the engine remaps user namespaces, and how. */
export interface EngineIdentity {
  SecurityOptions?: string[];
  DockerRootDir?: string;
}

/**
 * Where dockerd's `userns-remap` puts a container's uid 0 and gid 0 on the host; undefined
 * when the engine does not remap. Docker keeps a remapped engine's data in a root directory
 * named after that pair (`/var/lib/docker/<uid>.<gid>`), the one place its API shows it.
 */
export function remapBase(info: EngineIdentity): { uid: number; gid: number } | undefined {
  if (!(info.SecurityOptions ?? []).some((option) => option.split(',').includes('name=userns'))) {
    return undefined;
  }
  const pair = /\/(\d+)\.(\d+)\/?$/.exec(info.DockerRootDir ?? '');
  if (pair === null) {
    throw new Error(
      `the Docker engine remaps user namespaces, but its root directory "${info.DockerRootDir}" does not name the mapping`,
    );
  }
  return { uid: Number(pair[1]), gid: Number(pair[2]) };
}

/**
 * The sandbox user's ids as the host sees them: its ids inside the sandbox, shifted by the
 * engine's `userns-remap` when there is one. Everything the agent makes on the host for a
 * sandbox to own (its workspace disk's root, its CPU group's `cgroup.procs`, the unpacking and
 * packing of its archives) goes by these. Learned from the engine when the agent prepares the
 * host, before any sandbox is made.
 */
export class SandboxHostIds {
  private base = { uid: 0, gid: 0 };

  learn(info: EngineIdentity): void {
    this.base = remapBase(info) ?? { uid: 0, gid: 0 };
  }

  /** Whether the engine remaps: a sandbox's root is an unprivileged uid of the host. */
  get remapped(): boolean {
    return this.base.uid !== 0;
  }

  get uid(): number {
    return this.base.uid + SANDBOX_UID;
  }

  get gid(): number {
    return this.base.gid + SANDBOX_GID;
  }

  /** The host uid of a sandbox's root (0 without remapping). */
  get rootUid(): number {
    return this.base.uid;
  }

  /** The host gid of a sandbox's root group (0 without remapping). */
  get rootGid(): number {
    return this.base.gid;
  }
}

/**
 * Lets a remapped sandbox's root reach what is bound into sandboxes from `dir` (workspace
 * disks, the CA bundle): gVisor's gofer opens a bind's source as that uid, so `dir` becomes
 * searchable by its group only (root:<its gid>, 0710) and every directory above it must be
 * searchable by others. Throws, naming the directory to open, when one is not. Nothing to do
 * on an engine that does not remap (`dir` stays the agent's alone).
 */
export async function openToSandboxRoot(dir: string, ids: SandboxHostIds): Promise<void> {
  if (!ids.remapped) return;
  await chown(dir, 0, ids.rootGid);
  await chmod(dir, 0o710);
  for (let above = dirname(dir); ; above = dirname(above)) {
    const { mode } = await stat(above);
    if ((mode & 0o001) === 0) {
      throw new AppError(
        'service_unavailable',
        `Sandboxes (host uid ${ids.rootUid} under the engine's userns-remap) cannot reach ${dir}: give ${above} search permission for others (chmod o+x), or choose another SANDBOX_WORKSPACE_DIR`,
        { retryAfter: 30 },
      );
    }
    if (above === dirname(above)) return;
  }
}
