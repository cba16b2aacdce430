import { AppError } from '@sandbox/errors';
import { sandboxLabels } from '../docker/container-spec';
import type { SessionLock } from '../locks/session-locks';
import type { SandboxInfo, SandboxSpec } from '../sandbox-runtime';
import { claimPooled } from './claim-pooled';
import { createSandbox, rebuildSandbox } from './create-sandbox';
import type { LifecycleDeps } from './lifecycle-deps';

/**
 * A sandbox for a session that has none, with its saved workspace (deep sleep), under the
 * session's lock: a pool member when there is one, else a new disk and container.
 */
export async function restoreSaved(
  deps: LifecycleDeps,
  lock: SessionLock,
  spec: SandboxSpec,
): Promise<SandboxInfo> {
  const { sessionId } = spec;
  const saved = await deps.blobs.manifest(sessionId);
  if (saved === undefined) {
    throw new AppError('session_not_found', 'No saved workspace for this session');
  }
  // A kept disk: a new container on it (a failed start leaves the disk). Else the workspace
  // first (so that no process sees it half-restored), then the container: a pool member's
  // workspace is filled before it takes the session's name.
  const info =
    saved.format === 'disk'
      ? await rebuildSandbox(deps, lock, spec)
      : ((await claimPooled(deps, lock, spec, async (member) => {
          await deps.blobs.restore(sessionId, await deps.workspaces.hostPath(member.slot));
        })) ?? (await restoreCold(deps, lock, spec)));
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
