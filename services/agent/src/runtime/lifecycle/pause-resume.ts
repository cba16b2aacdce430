import { AppError } from '@sandbox/errors';
import type { SandboxInfo } from '../sandbox-runtime';
import { ensureRunning } from './heal';
import type { LifecycleDeps } from './lifecycle-deps';
import { inUse, type TransitionGuard } from './transition-guard';
import { findSandbox, inspectSandbox } from './sandbox-info';

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
      // The host cannot count a frozen gVisor sandbox's processes: its runner does, first.
      if (info.ownKernel) await deps.runners.stats(sessionId, info.id).catch(() => undefined);
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
