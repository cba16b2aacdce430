import { AppError } from '@sandbox/errors';
import type { SandboxInfo } from '../sandbox-runtime';
import { ensureRunning } from './heal';
import type { LifecycleDeps } from './lifecycle-deps';
import { findSandbox, inspectSandbox } from './sandbox-info';

/** Idle: freezes the sandbox's processes. */
export function pauseSandbox(deps: LifecycleDeps, sessionId: string): Promise<SandboxInfo> {
  return deps.locks.withLock(sessionId, async () => {
    const info = await findSandbox(deps, sessionId);
    if (info === undefined) throw new AppError('session_not_found', 'Session sandbox not found');
    if (!info.paused) await deps.containers.pause(info.id);
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
