import { AppError } from '@sandbox/errors';
import type { SandboxInfo } from '../sandbox-runtime';
import { ensureRunning } from './heal';
import type { LifecycleDeps } from './lifecycle-deps';
import { inUse, type TransitionGuard } from './transition-guard';
import { findSandbox, inspectSandbox } from './sandbox-info';

/** How long a gVisor sandbox's freeze waits for its runner's process count. */
const COUNT_WAIT_MS = 200;

async function countedBeforeFreezing(
  deps: LifecycleDeps,
  sessionId: string,
  containerId: string,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    deps.runners.stats(sessionId, containerId).catch(() => undefined),
    new Promise((resolve) => (timer = setTimeout(resolve, COUNT_WAIT_MS))),
  ]);
  clearTimeout(timer);
}

/**
 * Idle: freezes the sandbox's processes, unless `guard` says the session is in use: then it
 * stays running (and says so). A request that starts while it is being frozen thaws it again.
 */
export function pauseSandbox(
  deps: LifecycleDeps,
  sessionId: string,
  guard?: TransitionGuard,
): Promise<SandboxInfo> {
  return deps.locks.withLock(sessionId, async () => {
    const info = await findSandbox(deps, sessionId);
    if (info === undefined) throw new AppError('session_not_found', 'Session sandbox not found');
    if (!info.paused && !inUse(guard, sessionId)) {
      const mark = guard?.use.mark(sessionId);
      // The host cannot count a frozen gVisor sandbox's processes: its runner does, first,
      // unless it is too busy to answer at once.
      if (info.ownKernel) await countedBeforeFreezing(deps, sessionId, info.id);
      await deps.containers.pause(info.id);
      if (guard !== undefined && mark !== undefined && guard.use.usedSince(mark)) {
        deps.logger.info({ sessionId }, 'a request came while pausing: thawed again');
        await deps.containers.unpause(info.id);
      }
    }
    return inspectSandbox(deps, sessionId);
  });
}

/** Thaws a paused sandbox (a no-op for a running one). */
export function resumeSandbox(deps: LifecycleDeps, sessionId: string): Promise<SandboxInfo> {
  return deps.locks.withLock(sessionId, async (lock) => {
    await ensureRunning(deps, lock);
    return inspectSandbox(deps, sessionId);
  });
}
