import { containerName } from '../docker/docker-names';
import type { SessionLock } from '../locks/session-locks';
import type { LifecycleDeps } from './lifecycle-deps';

async function dropContainer(deps: LifecycleDeps, lock: SessionLock): Promise<boolean> {
  deps.runners.close(lock.sessionId);
  const existed = await deps.containers.remove(containerName(lock.sessionId));
  // Its address is free for another sandbox: nothing of this session's policy may stay on it.
  await deps.egress.forget(lock.sessionId);
  return existed;
}

function removed(deps: LifecycleDeps, sessionId: string, existed: boolean): boolean {
  if (existed) deps.logger.info({ sessionId }, 'sandbox destroyed');
  return existed;
}

/** Removes the container and its workspace (not a saved copy of it). */
export async function removeSandbox(deps: LifecycleDeps, lock: SessionLock): Promise<boolean> {
  const container = await dropContainer(deps, lock);
  const workspace = await deps.workspaces.destroy(lock.sessionId);
  return removed(deps, lock.sessionId, container || workspace);
}

/** Removes the container only: its disk holds the session's only copy (a rebuild). */
export async function removeContainer(deps: LifecycleDeps, lock: SessionLock): Promise<boolean> {
  return removed(deps, lock.sessionId, await dropContainer(deps, lock));
}

/** Removes the session and every byte of its data, saved workspace included. */
export function destroySandbox(deps: LifecycleDeps, sessionId: string): Promise<boolean> {
  return deps.locks.withLock(sessionId, async (lock) => {
    // The spec goes first: a removal cut short is never rebuilt by `reconcile`.
    await deps.specs.remove(sessionId);
    const saved = await deps.blobs.manifest(sessionId);
    await deps.blobs.remove(sessionId);
    await deps.blobs.removeLogs(sessionId);
    return (await removeSandbox(deps, lock)) || saved !== undefined;
  });
}
