import { AppError } from '@sandbox/errors';
import type { ContainerState } from '../docker/container-client';
import { sandboxLabelKeys } from '../docker/docker-names';
import type { SessionLock } from '../locks/session-locks';
import { rebuildSandbox } from './create-sandbox';
import { restoreSaved } from './restore-saved';
import { enforceEgress } from './egress';
import type { LifecycleDeps } from './lifecycle-deps';
import { findSandbox, isRunning } from './sandbox-info';

/**
 * The session's running container. A paused one (idle) is thawed and a stopped or missing one
 * healed first (one being started after its answer is waited for), under the session's lock,
 * so that this never races a deep-sleep save or a removal. 404 when there is nothing to run.
 */
export async function requireRunning(
  deps: LifecycleDeps,
  sessionId: string,
): Promise<ContainerState> {
  const info = await findSandbox(deps, sessionId);
  // A sandbox still being started after its create or fork was answered waits for the start
  // (and its egress policy) to end.
  if (isRunning(info) && !deps.locks.finishing(sessionId)) return info;
  return deps.locks.withLock(sessionId, (lock) => bringBackOrFail(deps, lock));
}

/** `requireRunning` for a caller that holds the session's lock already. */
export async function ensureRunning(
  deps: LifecycleDeps,
  lock: SessionLock,
): Promise<ContainerState> {
  const info = await findSandbox(deps, lock.sessionId);
  if (isRunning(info)) return info;
  return bringBackOrFail(deps, lock);
}

async function bringBackOrFail(deps: LifecycleDeps, lock: SessionLock): Promise<ContainerState> {
  const running = await bringBack(deps, lock);
  if (running === undefined) {
    throw new AppError('session_not_found', 'Session sandbox not found', {
      details: { sessionId: lock.sessionId },
    });
  }
  return running;
}

async function bringBack(
  deps: LifecycleDeps,
  lock: SessionLock,
): Promise<ContainerState | undefined> {
  let info = await findSandbox(deps, lock.sessionId);
  if (info === undefined || (!info.running && !info.paused)) {
    info = await heal(deps, lock, info, true);
  }
  if (info?.paused) {
    // A request for an idle sandbox wakes it.
    await deps.containers.unpause(info.id).catch(() => undefined);
    info = await findSandbox(deps, lock.sessionId);
  }
  return isRunning(info) ? info : undefined;
}

function bornInPool(deps: LifecycleDeps, info: ContainerState): boolean {
  return info.labels[sandboxLabelKeys(deps.config.labelPrefix).pool] === 'true';
}

/**
 * Brings back a sandbox that should run but does not: a container stopped by a reboot or a
 * crash (its disk mounted again first), one removed behind the agent's back (rebuilt from its
 * recorded spec on the same workspace), or, `forRequest`, one in deep sleep (restored from its
 * saved copy; otherwise a sleeping session is left to `restore`). Returns the container, or
 * undefined when there is nothing to bring back.
 */
export async function heal(
  deps: LifecycleDeps,
  lock: SessionLock,
  info: ContainerState | undefined,
  forRequest = false,
): Promise<ContainerState | undefined> {
  const { sessionId } = lock;
  lock.check(sessionId);
  if (info === undefined) {
    const spec = await deps.specs.read(sessionId);
    if (spec === undefined) return undefined;
    if ((await deps.blobs.manifest(sessionId)) !== undefined) {
      if (!forRequest) return undefined;
      // Saved and removed by a deep sleep that a request overtook (the gateway saw it awake):
      // the request wakes it here.
      deps.logger.warn({ sessionId }, 'a request found its session in deep sleep: waking it');
      await restoreSaved(deps, lock, spec);
      return findSandbox(deps, sessionId);
    }
    if (!(await deps.workspaces.attach(sessionId))) return undefined;
    deps.logger.warn({ sessionId }, 'sandbox container vanished: rebuilding it on its disk');
    await rebuildSandbox(deps, lock, spec);
  } else {
    // A session being destroyed (its spec already gone) is not started again.
    const spec = await deps.specs.read(sessionId);
    if (spec === undefined) return undefined;
    if (!(await deps.workspaces.attach(sessionId))) {
      deps.logger.error({ sessionId }, 'a stopped sandbox has lost its workspace');
      return undefined;
    }
    deps.runners.close(sessionId);
    if (bornInPool(deps, info)) {
      // Its bind names the pool slot's mount point, gone since the claim: starting it would
      // give it an empty workspace. A new container on the session's disk instead.
      deps.logger.warn({ sessionId, state: info.status }, 'sandbox was stopped: rebuilding it');
      await deps.containers.remove(info.id);
      await rebuildSandbox(deps, lock, spec);
    } else {
      deps.logger.warn({ sessionId, state: info.status }, 'sandbox was stopped: starting it');
      await deps.containers.start(info.id);
      // A new network namespace, maybe a new address: held to the session's policy again.
      await enforceEgress(deps, sessionId, info.id, spec.egress);
    }
  }
  return findSandbox(deps, sessionId);
}
