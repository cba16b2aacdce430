import { AppError } from '@sandbox/errors';
import { containerSpec, sandboxLabels } from '../docker/container-spec';
import { statusCode } from '../docker/docker-names';
import type { Later, SessionLock } from '../locks/session-locks';
import type { SandboxInfo, SandboxSpec } from '../sandbox-runtime';
import { claimPooled } from './claim-pooled';
import { enforceEgress } from './egress';
import type { LifecycleDeps, PoolMember } from './lifecycle-deps';
import { removeContainer, removeSandbox } from './remove-sandbox';
import { findSandbox, inspectSandbox } from './sandbox-info';

type Cleanup = (deps: LifecycleDeps, lock: SessionLock) => Promise<boolean>;

/**
 * Creates and starts the sandbox of `spec` on its workspace (provisioned, or found), its spec
 * recorded beside it; returns the existing one for a known session. `pooled`: a warm pool
 * member may serve it. `cleanup` undoes a failed start.
 */
async function provision(
  deps: LifecycleDeps,
  lock: SessionLock,
  spec: SandboxSpec,
  cleanup: Cleanup,
  pooled: boolean,
  later?: Later,
  deadlineAt?: number,
  snapshotId?: string,
): Promise<SandboxInfo> {
  const { sessionId } = spec;
  lock.check(sessionId);
  // Every path that makes a session's sandbox records its spec first: without one, the node
  // has none to find, and dockerd (busy with the last creates' thaws and renames in a burst)
  // is not asked. A create retried, a rebuild or a wake has one.
  const known = (await deps.specs.read(sessionId)) !== undefined;
  if (known && (await findSandbox(deps, sessionId)) !== undefined) {
    return inspectSandbox(deps, sessionId);
  }
  // Docker refuses more CPU than the host has, which no retry would change.
  if (spec.limits.cpu > deps.hostCpus) {
    throw new AppError('invalid_request', `resourceLimits.cpu is at most ${deps.hostCpus} here`, {
      details: { field: 'resourceLimits.cpu', value: spec.limits.cpu, max: deps.hostCpus },
    });
  }

  const { coldStarts } = deps;
  const cold = (deadline: number | undefined) => () =>
    coldStarts === undefined
      ? startCold(deps, lock, spec, cleanup, snapshotId)
      : coldStarts.run(() => startCold(deps, lock, spec, cleanup, snapshotId), deadline);
  const work = cold(deadlineAt);
  if (pooled) {
    // After a claim already answered, the sandbox must be made whatever the caller's deadline.
    const deferred = later === undefined ? undefined : { later, startCold: cold(undefined) };
    // From a snapshot: its files are unpacked into the member's disk before it is claimed.
    const seed =
      snapshotId === undefined
        ? undefined
        : async (member: PoolMember) => {
            await deps.blobs.restoreSnapshot(
              snapshotId,
              await deps.workspaces.hostPath(member.slot),
            );
          };
    const claimed = await claimPooled(deps, lock, spec, seed, deferred);
    if (claimed !== undefined) return claimed;
  }
  return pooled && deps.pool !== undefined ? deps.pool.cold(work) : work();
}

/**
 * The slow way: the workspace (provisioned, or found; with `snapshotId`, a new one that gets
 * the snapshot's files), then a container on it.
 */
async function startCold(
  deps: LifecycleDeps,
  lock: SessionLock,
  spec: SandboxSpec,
  cleanup: Cleanup,
  snapshotId?: string,
): Promise<SandboxInfo> {
  const { sessionId } = spec;
  const labels = sandboxLabels(spec, deps.config);
  const workspace = await deps.workspaces.create(sessionId, spec.limits.diskMb, labels);
  if (snapshotId !== undefined) {
    try {
      await deps.blobs.restoreSnapshot(snapshotId, await deps.workspaces.hostPath(sessionId));
    } catch (err) {
      await cleanup(deps, lock).catch((cleanupErr: unknown) =>
        deps.logger.error({ err: cleanupErr, sessionId }, 'cleanup failed'),
      );
      throw err;
    }
  }
  await deps.specs.write(spec);
  try {
    const containerId = await deps.containers.createAndStart(
      containerSpec(spec, deps.config, workspace),
    );
    await enforceEgress(deps, sessionId, containerId, spec.egress);
    deps.logger.info({ sessionId, containerId }, 'sandbox started');
    // Start the runner now, without waiting for it: the first run finds it ready.
    deps.runners
      .warmUp(sessionId, containerId)
      .catch((err: unknown) => deps.logger.warn({ err, sessionId }, 'runner warm-up failed'));
    return { sessionId, containerId, status: 'running', filesCount: 0, activeProcesses: 0 };
  } catch (err) {
    if (statusCode(err) === 409) return inspectSandbox(deps, sessionId); // created concurrently
    deps.logger.error({ err, sessionId }, 'sandbox creation failed');
    await cleanup(deps, lock).catch((cleanupErr: unknown) =>
      deps.logger.error({ err: cleanupErr, sessionId }, 'cleanup failed'),
    );
    throw new AppError('service_unavailable', 'Could not start the session sandbox', {
      cause: err,
      retryAfter: 5,
    });
  }
}

/**
 * A new sandbox, from the warm pool when it can (not when `pooled` is false: its workspace is
 * already made); a failed start removes what it made, workspace included. With `later`, a
 * claim from the pool answers before its disk move and rename, which run under the lock after.
 * A cold start that could not end by `deadlineAt` (the caller's) is refused before it begins.
 * With `snapshotId`, the workspace starts with that snapshot's files (ADR 44).
 */
export function createSandbox(
  deps: LifecycleDeps,
  lock: SessionLock,
  spec: SandboxSpec,
  pooled = true,
  later?: Later,
  deadlineAt?: number,
  snapshotId?: string,
): Promise<SandboxInfo> {
  return provision(deps, lock, spec, removeSandbox, pooled, later, deadlineAt, snapshotId);
}

/** A sandbox rebuilt on its kept disk, which holds the session's only copy: never removed. */
export function rebuildSandbox(
  deps: LifecycleDeps,
  lock: SessionLock,
  spec: SandboxSpec,
): Promise<SandboxInfo> {
  return provision(deps, lock, spec, removeContainer, false);
}
