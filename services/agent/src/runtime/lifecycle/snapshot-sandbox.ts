import { performance } from 'node:perf_hooks';
import { AppError } from '@sandbox/errors';
import type { SnapshotTaken } from '../sandbox-runtime';
import type { Hold } from '../storage/held-archive';
import type { LifecycleDeps } from './lifecycle-deps';
import { findSandbox } from './sandbox-info';

/**
 * A snapshot of a session's workspace into the blob store (ADR 44). The session's lock is held
 * only while its files are packed, and its sandbox is frozen for just that (a sandbox that was
 * idle stays frozen): its processes go on once the tar is written, and the compression,
 * checks and upload run after. A sleeping session has no sandbox here (the gateway wakes it
 * first): 404 session_not_found.
 */
export async function snapshotSandbox(
  deps: LifecycleDeps,
  sessionId: string,
  snapshotId: string,
): Promise<SnapshotTaken> {
  let pausedMs = 0;
  const hold: Hold = (pack) =>
    deps.locks.withLock(sessionId, async () => {
      const info = await findSandbox(deps, sessionId);
      if (info === undefined) {
        throw new AppError('session_not_found', 'No sandbox of this session on this node', {
          details: { sessionId },
        });
      }
      // Never pack an unmounted disk's empty mount point (after a reboot) as the workspace.
      if (!(await deps.workspaces.attach(sessionId))) {
        throw new AppError('service_unavailable', 'The session disk is not available', {
          retryAfter: 30,
        });
      }
      const source = await deps.workspaces.hostPath(sessionId);
      const freeze = info.running && !info.paused;
      const started = performance.now();
      if (freeze) await deps.containers.pause(info.id);
      try {
        return await pack(source);
      } finally {
        if (freeze) await deps.containers.unpause(info.id);
        pausedMs = freeze ? performance.now() - started : 0;
      }
    });
  const saved = await deps.blobs.saveSnapshot(snapshotId, hold);
  deps.logger.info(
    { sessionId, snapshotId, bytes: saved.bytes, pausedMs: Math.round(pausedMs) },
    'snapshot stored',
  );
  return {
    bytes: saved.bytes,
    filesCount: saved.filesCount,
    pausedMs: Math.round(pausedMs),
    processesKept: false,
  };
}
