import { performance } from 'node:perf_hooks';
import { AppError } from '@sandbox/errors';
import { sandboxLabels } from '../docker/container-spec';
import type { Later, SessionLock } from '../locks/session-locks';
import { rebuildSandbox } from '../lifecycle/create-sandbox';
import type { LifecycleDeps } from '../lifecycle/lifecycle-deps';
import { destroySandbox } from '../lifecycle/remove-sandbox';
import { findSandbox } from '../lifecycle/sandbox-info';
import type { SandboxInfo, SandboxSpec } from '../sandbox-runtime';

/** What a fork made, and whether the forks have the source's processes (ADR 43). */
export interface ForkResult {
  sandboxes: SandboxInfo[];
  processesKept: boolean;
}

const sinceMs = (from: number): number => Math.round(performance.now() - from);

/** The source's disk cloned for every fork, under its lock (no pause or deep sleep meanwhile). */
async function cloneSource(
  deps: LifecycleDeps,
  sourceId: string,
  specs: readonly SandboxSpec[],
): Promise<void> {
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
}

/**
 * The fork's sandbox, started on its cloned disk after the fork was answered, still under its
 * lock (its first request waits for it). A start that fails keeps the disk and the spec, the
 * fork's only copy of its files: its next request (or the next reconcile) starts it again, as
 * after a crash, and a removal removes it whole.
 */
async function startFork(deps: LifecycleDeps, lock: SessionLock, spec: SandboxSpec): Promise<void> {
  const { sessionId } = spec;
  const startedAt = performance.now();
  try {
    // Mounted first, apart: a failed mount of a found disk never removes it.
    if (!(await deps.workspaces.attach(sessionId))) throw new Error('the cloned disk is gone');
    await rebuildSandbox(deps, lock, spec);
    deps.logger.info({ sessionId, startMs: sinceMs(startedAt) }, "fork's sandbox started");
  } catch (err) {
    deps.logger.error(
      { err, sessionId },
      "a fork's sandbox did not start; its next request starts it again",
    );
  }
}

/**
 * The fork's spec recorded beside its cloned disk (a restart or a request can then start it);
 * its sandbox's start is handed over to run under its lock after the answer.
 */
async function recordFork(
  deps: LifecycleDeps,
  lock: SessionLock,
  later: Later,
  spec: SandboxSpec,
): Promise<SandboxInfo> {
  lock.check(spec.sessionId);
  await deps.specs.write(spec);
  later(() => startFork(deps, lock, spec));
  return {
    sessionId: spec.sessionId,
    containerId: '',
    status: 'running',
    filesCount: 0,
    activeProcesses: 0,
  };
}

/**
 * Forks of a running or idle session, files only (ADR 43): its disk is cloned for each fork
 * while frozen for a moment (its processes go on), under its lock, so that no transition
 * (a pause, a deep sleep) runs meanwhile; each fork's spec is recorded, and the call is
 * answered. Each fork's sandbox then starts on its clone under the fork's lock, which its
 * first request waits for (as after a claim from the warm pool, ADR 36). All or none up to
 * the answer: a clone or a record that fails removes every fork made, disks included.
 */
export async function forkSandboxes(
  deps: LifecycleDeps,
  sourceId: string,
  specs: readonly SandboxSpec[],
): Promise<ForkResult> {
  const startedAt = performance.now();
  await cloneSource(deps, sourceId, specs);
  const clonedMs = sinceMs(startedAt);
  const recorded = await Promise.allSettled(
    specs.map((spec) =>
      deps.locks.withLockAnsweringFirst(spec.sessionId, (lock, later) =>
        recordFork(deps, lock, later, spec),
      ),
    ),
  );
  const failed = recorded.find((result) => result.status === 'rejected');
  if (failed !== undefined) {
    // Each removal waits for its fork's start (under the lock), then takes all of it.
    await Promise.all(
      specs.map((spec) =>
        destroySandbox(deps, spec.sessionId).catch((err: unknown) =>
          deps.logger.error({ err, sessionId: spec.sessionId }, "a failed fork's removal failed"),
        ),
      ),
    );
    throw failed.reason;
  }
  const sandboxes = recorded.map((result) => (result as PromiseFulfilledResult<SandboxInfo>).value);
  deps.logger.info(
    {
      sessionId: sourceId,
      forks: specs.map((spec) => spec.sessionId),
      clonedMs,
      answerMs: sinceMs(startedAt),
    },
    'session forked',
  );
  // No runtime here keeps a session's processes in its forks yet: files only.
  return { sandboxes, processesKept: false };
}
