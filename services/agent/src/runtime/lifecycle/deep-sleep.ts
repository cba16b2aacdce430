import { AppError } from '@sandbox/errors';
import type { SandboxInfo, SandboxSpec } from '../sandbox-runtime';
import type { ProcessLogs } from '../processes/process-logs';
import type { ArchiveManifest } from '../storage/blob-store';
import { ensureRunning } from './heal';
import type { LifecycleDeps } from './lifecycle-deps';
import { removeContainer, removeSandbox } from './remove-sandbox';
import { restoreSaved } from './restore-saved';
import { inUse, type TransitionGuard } from './transition-guard';
import { findSandbox, inspectSandbox } from './sandbox-info';

/** What a deep sleep did: saved and removed the sandbox, or left it to a request (`inUse`). */
export interface Hibernated {
  filesCount: number;
  bytes: number;
  inUse: boolean;
  /** The workspace stayed on the node's own disk (SANDBOX_DEEP_SLEEP=disk), not archived. */
  keptDisk: boolean;
}

const LEFT_IN_USE: Hibernated = { filesCount: 0, bytes: 0, inUse: true, keptDisk: false };

/** How a run under way ends when its session leaves the node (a drain). */
export const sessionMoved = (): AppError =>
  new AppError(
    'service_unavailable',
    'The session is moving to another node (its node is being drained): its processes ended; run again',
    { retryAfter: 2, details: { reason: 'session_moved' } },
  );

export interface HibernateOptions {
  /**
   * The session leaves the node (a drain): not refused while in use (the sandbox's processes
   * end with it), and archived to the blob store whatever SANDBOX_DEEP_SLEEP says.
   */
  evacuate?: boolean;
}

const hibernated = (saved: ArchiveManifest): Hibernated => ({
  filesCount: saved.filesCount,
  bytes: saved.bytes,
  inUse: false,
  keptDisk: saved.format === 'disk',
});

/**
 * Deep sleep: saves the workspace, verifies it, removes the sandbox (with SANDBOX_DEEP_SLEEP
 * =disk and a workspace past SANDBOX_DEEP_SLEEP_DISK_MIN_MB: keeps the session's disk, removes
 * the container). Idempotent. Not while
 * `guard` says the session is in use; a request that comes while the workspace is saved (it
 * waits for the frozen sandbox) cancels the sleep: the copy goes, the sandbox thaws.
 */
export function hibernateSandbox(
  deps: LifecycleDeps,
  sessionId: string,
  guard?: TransitionGuard,
  { evacuate = false }: HibernateOptions = {},
): Promise<Hibernated> {
  return deps.locks.withLock(sessionId, async (lock) => {
    const info = await findSandbox(deps, sessionId);
    if (info === undefined) {
      const saved = await deps.blobs.manifest(sessionId);
      if (saved !== undefined) return hibernated(saved);
      throw new AppError('session_not_found', 'Nothing to put to sleep for this session');
    }
    if (!evacuate && inUse(guard, sessionId)) return LEFT_IN_USE;
    const mark = guard?.use.mark(sessionId);
    const overtaken = () =>
      !evacuate && guard !== undefined && mark !== undefined && guard.use.usedSince(mark);
    // Frozen processes cannot change files while they are saved.
    if (!info.paused && info.running) await deps.containers.pause(info.id);
    // Leaving the node, the session's runs end now, and say why.
    if (evacuate) deps.runners.close(sessionId, sessionMoved());
    // Never save an unmounted disk's empty mount point (after a reboot) as the workspace.
    if (!(await deps.workspaces.attach(sessionId))) {
      throw new AppError('service_unavailable', 'The session disk is not available', {
        retryAfter: 30,
      });
    }
    const source = await deps.workspaces.hostPath(sessionId);
    const keepDisk =
      !evacuate &&
      deps.config.deepSleep === 'disk' &&
      (await deps.blobs.bytesInUse(source)) >= deps.config.deepSleepDiskMinBytes;
    const saved = overtaken()
      ? undefined
      : keepDisk
        ? await deps.blobs.keepDisk(sessionId, source)
        : await deps.blobs.save(sessionId, source);
    if (saved === undefined || overtaken()) {
      deps.logger.info({ sessionId }, 'a request came while going to deep sleep: left awake');
      if (saved !== undefined) await deps.blobs.remove(sessionId);
      await deps.containers.unpause(info.id);
      return LEFT_IN_USE;
    }
    // A kept disk stays (mounted): the next wake is a new container on it.
    if (keepDisk) await removeContainer(deps, lock);
    else await removeSandbox(deps, lock);
    guard?.use.forget(sessionId);
    deps.logger.info({ sessionId, evacuate, ...saved }, 'sandbox in deep sleep');
    return hibernated(saved);
  });
}

/** A fresh sandbox with the saved workspace (or the running one). Idempotent. */
export function restoreSandbox(deps: LifecycleDeps, spec: SandboxSpec): Promise<SandboxInfo> {
  const { sessionId } = spec;
  return deps.locks.withLock(sessionId, async (lock) => {
    const existing = await findSandbox(deps, sessionId);
    if (existing !== undefined) {
      await ensureRunning(deps, lock);
      // A wake cut short after its sandbox started (an agent crash): it runs on the restored
      // workspace, so the saved copy goes now.
      if ((await deps.blobs.manifest(sessionId)) !== undefined) await deps.blobs.remove(sessionId);
      return inspectSandbox(deps, sessionId);
    }
    return restoreSaved(deps, lock, spec);
  });
}

/** The run logs of a session that moved here, if its last node saved them and none are here. */
export async function restoreMovedLogs(
  { blobs, logs, logger }: Pick<LifecycleDeps, 'blobs' | 'logger'> & { logs: ProcessLogs },
  sessionId: string,
): Promise<void> {
  if (logs.has(sessionId)) return;
  try {
    if (await blobs.restoreLogs(sessionId, logs.dirOf(sessionId))) logs.loadSession(sessionId);
  } catch (err) {
    logger.warn({ err, sessionId }, "a moved session's run logs were not restored");
  }
}
