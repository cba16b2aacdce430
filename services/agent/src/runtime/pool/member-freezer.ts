import { freeze, thaw, type CgroupFreezer } from '../docker/cgroup-freezer';
import type { WarmPoolDeps } from './warm-pool-deps';

/**
 * Freezes a pool member through its cgroup where the agent may (one file write each way, where
 * `docker pause` and `unpause` cost dockerd, containerd, the shim and a `runc` process each),
 * else through Docker (and always on a kernel of its own: `ownKernel`). Returns the cgroup's
 * freezer when that was used.
 */
export async function freezeMember(
  { containers, freezerOf }: Pick<WarmPoolDeps, 'containers' | 'freezerOf'>,
  containerId: string,
  ownKernel: boolean,
): Promise<CgroupFreezer | undefined> {
  if (freezerOf !== undefined && !ownKernel) {
    const state = await containers.find(containerId);
    const freezer = state === undefined ? undefined : await freezerOf(state.pid);
    if (freezer !== undefined && (await freeze(freezer))) return freezer;
  }
  await containers.pause(containerId);
  return undefined;
}

/**
 * A member of an earlier run may be frozen through its cgroup, which Docker does not know:
 * thawed, it can be removed (on cgroup v1 a frozen task does not die of SIGKILL).
 */
export async function thawLeftover(
  { containers, freezerOf }: Pick<WarmPoolDeps, 'containers' | 'freezerOf'>,
  containerId: string,
): Promise<void> {
  if (freezerOf === undefined) return;
  const state = await containers.find(containerId);
  if (state === undefined || !state.running || state.paused) return;
  const freezer = await freezerOf(state.pid);
  if (freezer !== undefined) await thaw(freezer).catch(() => undefined);
}
