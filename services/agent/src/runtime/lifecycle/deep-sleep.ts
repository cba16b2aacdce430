import { AppError } from '@sandbox/errors';
import { sandboxLabels } from '../docker/container-spec';
import type { SessionLock } from '../locks/session-locks';
import type { SandboxInfo, SandboxSpec } from '../sandbox-runtime';
import { claimPooled } from './claim-pooled';
import { createSandbox } from './create-sandbox';
import { ensureRunning } from './heal';
import type { LifecycleDeps } from './lifecycle-deps';
import { removeSandbox } from './remove-sandbox';
import { findSandbox, inspectSandbox } from './sandbox-info';

/** Deep sleep: saves the workspace, verifies it, removes the sandbox. Idempotent. */
export function hibernateSandbox(
  deps: LifecycleDeps,
  sessionId: string,
): Promise<{ filesCount: number; bytes: number }> {
  return deps.locks.withLock(sessionId, async (lock) => {
    const info = await findSandbox(deps, sessionId);
    if (info === undefined) {
      const saved = await deps.blobs.manifest(sessionId);
      if (saved !== undefined) return { filesCount: saved.filesCount, bytes: saved.bytes };
      throw new AppError('session_not_found', 'Nothing to put to sleep for this session');
    }
    // Frozen processes cannot change files while they are saved.
    if (!info.paused && info.running) await deps.containers.pause(info.id);
    // Never save an unmounted disk's empty mount point (after a reboot) as the workspace.
    if (!(await deps.workspaces.attach(sessionId))) {
      throw new AppError('service_unavailable', 'The session disk is not available', {
        retryAfter: 30,
      });
    }
    const saved = await deps.blobs.save(sessionId, await deps.workspaces.hostPath(sessionId));
    await removeSandbox(deps, lock);
    deps.logger.info({ sessionId, ...saved }, 'sandbox in deep sleep');
    return { filesCount: saved.filesCount, bytes: saved.bytes };
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
    const saved = await deps.blobs.manifest(sessionId);
    if (saved === undefined) {
      throw new AppError('session_not_found', 'No saved workspace for this session');
    }
    // The workspace first (so that no process sees it half-restored), then the container: a
    // pool member's workspace is filled before it takes the session's name.
    const info =
      (await claimPooled(deps, lock, spec, async (member) => {
        await deps.blobs.restore(sessionId, await deps.workspaces.hostPath(member.slot));
      })) ?? (await restoreCold(deps, lock, spec));
    // The wake is done once no manifest names the saved copy. The archive is garbage from then
    // on: it is deleted after the answer (unlinking 100 MB takes ~70 ms here), under the lock,
    // so before any later step of the session; a copy left by a failure or a crash goes with
    // the session's next save or its removal.
    await deps.blobs.forget(sessionId);
    deps.locks
      .withLock(sessionId, () => deps.blobs.remove(sessionId))
      .catch((err: unknown) =>
        deps.logger.warn({ err, sessionId }, "a woken session's archive was not deleted"),
      );
    deps.logger.info({ sessionId }, 'sandbox woke from deep sleep');
    return info;
  });
}

/**
 * A restore without the pool: a new workspace, the saved files, then a container on them.
 * While a session sleeps its saved copy is the whole of it, so a disk found for it (left by a
 * save, a wake cut short, or a pool claim that failed after the disk moved) goes first, and so
 * does the disk of a restore that fails: every try starts on an empty disk.
 */
async function restoreCold(
  deps: LifecycleDeps,
  lock: SessionLock,
  spec: SandboxSpec,
): Promise<SandboxInfo> {
  const { sessionId } = spec;
  const labels = sandboxLabels(spec, deps.config);
  await deps.workspaces.destroy(sessionId);
  await deps.workspaces.create(sessionId, spec.limits.diskMb, labels);
  try {
    await deps.blobs.restore(sessionId, await deps.workspaces.hostPath(sessionId));
  } catch (err) {
    await deps.workspaces
      .destroy(sessionId)
      .catch((destroyErr: unknown) =>
        deps.logger.error(
          { err: destroyErr, sessionId },
          "removal of a failed restore's disk failed",
        ),
      );
    throw err;
  }
  return createSandbox(deps, lock, spec, false);
}
