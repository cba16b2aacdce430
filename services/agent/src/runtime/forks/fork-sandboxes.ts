import { AppError } from '@sandbox/errors';
import { sandboxLabels } from '../docker/container-spec';
import { createSandbox } from '../lifecycle/create-sandbox';
import type { LifecycleDeps } from '../lifecycle/lifecycle-deps';
import { destroySandbox } from '../lifecycle/remove-sandbox';
import { findSandbox } from '../lifecycle/sandbox-info';
import type { SandboxInfo, SandboxSpec } from '../sandbox-runtime';

/** What a fork made, and whether the forks have the source's processes (ADR 43). */
export interface ForkResult {
  sandboxes: SandboxInfo[];
  processesKept: boolean;
}

/**
 * Forks of a running or idle session, files only (ADR 43): its disk is cloned for each fork
 * while frozen for a moment (its processes go on), under its lock, so that no transition
 * (a pause, a deep sleep) runs meanwhile; then each fork's sandbox starts on its clone. All
 * or none: a fork that fails to start removes every fork made, disks included.
 */
export async function forkSandboxes(
  deps: LifecycleDeps,
  sourceId: string,
  specs: readonly SandboxSpec[],
): Promise<ForkResult> {
  await deps.locks.withLock(sourceId, async () => {
    const source = await findSandbox(deps, sourceId);
    if (source === undefined || (!source.running && !source.paused)) {
      // Put to sleep (or removed) since the gateway woke it: a moment's state, retried.
      throw new AppError('service_unavailable', 'The session has no sandbox here to fork now', {
        retryAfter: 1,
      });
    }
    await deps.workspaces.clone(
      sourceId,
      specs.map((spec) => ({
        sessionId: spec.sessionId,
        labels: sandboxLabels(spec, deps.config),
      })),
    );
  });
  const started = await Promise.allSettled(
    specs.map((spec) =>
      deps.locks.withLock(spec.sessionId, (lock) => createSandbox(deps, lock, spec, false)),
    ),
  );
  const failed = started.find((result) => result.status === 'rejected');
  if (failed !== undefined) {
    await Promise.all(
      specs.map((spec) =>
        destroySandbox(deps, spec.sessionId).catch((err: unknown) =>
          deps.logger.error({ err, sessionId: spec.sessionId }, "a failed fork's removal failed"),
        ),
      ),
    );
    throw failed.reason;
  }
  const sandboxes = started.map((result) => (result as PromiseFulfilledResult<SandboxInfo>).value);
  // No runtime here keeps a session's processes in its forks yet: files only.
  return { sandboxes, processesKept: false };
}
