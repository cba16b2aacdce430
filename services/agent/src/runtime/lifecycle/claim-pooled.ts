import { thaw } from '../docker/cgroup-freezer';
import { containerLimits } from '../docker/container-spec';
import { containerName } from '../docker/docker-names';
import type { Later, SessionLock } from '../locks/session-locks';
import type { SandboxInfo, SandboxSpec } from '../sandbox-runtime';
import { enforceEgress } from './egress';
import type { LifecycleDeps, PoolMember, SandboxPool } from './lifecycle-deps';

/** Work on a member's workspace before it becomes the session's (a restore unpacks into it). */
export type PrepareMember = (member: PoolMember) => Promise<void>;

function sameLimits(deps: LifecycleDeps, member: PoolMember, spec: SandboxSpec): boolean {
  const had = containerLimits(member.limits, deps.config);
  const wanted = containerLimits(spec.limits, deps.config);
  return (
    had.memoryBytes === wanted.memoryBytes &&
    had.nanoCpus === wanted.nanoCpus &&
    had.pidsLimit === wanted.pidsLimit
  );
}

/**
 * The member's container thaws (members wait frozen: through its cgroup, one file write, or
 * Docker's pause), takes the session's limits when they
 * differ and its egress policy, then its name: found by that name, it runs and has them.
 */
async function takeName(deps: LifecycleDeps, member: PoolMember, spec: SandboxSpec): Promise<void> {
  if (member.freezer !== undefined) await thaw(member.freezer);
  else if (member.frozen === true) await deps.containers.unpause(member.containerId);
  if (!sameLimits(deps, member, spec)) {
    await deps.containers.updateLimits(
      member.containerId,
      containerLimits(spec.limits, deps.config),
    );
  }
  await enforceEgress(deps, spec.sessionId, member.containerId, spec.egress);
  await deps.containers.rename(member.containerId, containerName(spec.sessionId));
}

/** A member that could not become the session's sandbox is removed whole; the caller starts cold. */
async function discarded(
  deps: LifecycleDeps,
  pool: SandboxPool,
  member: PoolMember,
  err: unknown,
): Promise<undefined> {
  deps.logger.warn({ err, slot: member.slot }, 'pool claim failed; starting cold');
  await pool
    .discard(member)
    .catch((discardErr: unknown) =>
      deps.logger.error({ err: discardErr, slot: member.slot }, 'pool member removal failed'),
    );
  return undefined;
}

/** How a claim ends when its caller has been answered first (`claimPooled`'s `later`). */
export interface Deferred {
  later: Later;
  /** Makes the session's sandbox the slow way, if the rest of the claim fails. */
  startCold: () => Promise<unknown>;
}

/**
 * The rest of a claim answered first, still under the session's lock: the disk and the
 * container take the session's names (and limits). If either fails, the member goes and the
 * session's sandbox is made the slow way, so a request waiting for the lock finds one.
 */
async function finishClaim(
  deps: LifecycleDeps,
  pool: SandboxPool,
  member: PoolMember,
  spec: SandboxSpec,
  startCold: () => Promise<unknown>,
): Promise<void> {
  const { sessionId } = spec;
  const [adopted, renamed] = await Promise.allSettled([
    pool.adoptWorkspace(member, sessionId),
    takeName(deps, member, spec),
  ]);
  const failed = [adopted, renamed].find((step) => step.status === 'rejected');
  if (failed === undefined) return;
  deps.logger.warn(
    { err: failed.reason, sessionId, slot: member.slot },
    'pool claim failed after its answer; starting the sandbox cold',
  );
  deps.runners.close(sessionId);
  // Its disk is the session's once adopted: then only the container goes.
  const removal =
    adopted.status === 'rejected'
      ? pool.discard(member)
      : deps.containers.remove(member.containerId).then(() => undefined);
  await removal.catch((err: unknown) =>
    deps.logger.error({ err, slot: member.slot }, 'pool member removal failed'),
  );
  await startCold().catch((err: unknown) =>
    deps.logger.error({ err, sessionId }, 'the cold start after a failed claim failed'),
  );
}

const claimedInfo = (sessionId: string, member: PoolMember): SandboxInfo => ({
  sessionId,
  containerId: member.containerId,
  status: 'running',
  filesCount: 0,
  activeProcesses: 0,
});

/**
 * The session's sandbox from the warm pool: a member's workspace and container take the
 * session's names, its limits the spec's, and its runner serves the session. Undefined when
 * the pool has no member for the spec or the claim failed; the caller then makes the sandbox
 * the slow way, on the adopted workspace if the claim got that far. A claim cut short by a
 * crash leaves the session's record, disk or container, which the gateway's removal of the
 * failed session takes away (as it does after a cold create cut short).
 *
 * With `deferred`, the claim answers once the session's spec is recorded: the disk move and
 * the rename (tens of milliseconds of mount and dockerd work) finish under the session's lock
 * after the answer, which every other request of the session waits for.
 */
export async function claimPooled(
  deps: LifecycleDeps,
  lock: SessionLock,
  spec: SandboxSpec,
  prepare?: PrepareMember,
  deferred?: Deferred,
): Promise<SandboxInfo | undefined> {
  const { pool } = deps;
  const { sessionId } = spec;
  lock.check(sessionId);
  const member = pool?.take(spec.limits);
  if (pool === undefined || member === undefined) return undefined;
  if (prepare !== undefined) {
    try {
      await prepare(member);
    } catch (err) {
      return discarded(deps, pool, member, err);
    }
  }
  if (deferred !== undefined) {
    try {
      await deps.specs.write(spec);
    } catch (err) {
      return discarded(deps, pool, member, err);
    }
    deps.runners.adopt(member.slot, sessionId);
    deferred.later(() => finishClaim(deps, pool, member, spec, deferred.startCold));
    deps.logger.info(
      { sessionId, containerId: member.containerId, slot: member.slot },
      'sandbox claimed from the warm pool',
    );
    return claimedInfo(sessionId, member);
  }
  // The record, the disk and the container are apart: they change together.
  const [recorded, adopted, renamed] = await Promise.allSettled([
    deps.specs.write(spec),
    pool.adoptWorkspace(member, sessionId),
    takeName(deps, member, spec),
  ]);
  if (adopted.status === 'rejected') return discarded(deps, pool, member, adopted.reason);
  const failed = [recorded, renamed].find((step) => step.status === 'rejected');
  if (failed !== undefined) {
    // The disk is the session's now: only the container is replaced.
    deps.logger.warn({ err: failed.reason, sessionId, slot: member.slot }, 'pool claim failed');
    deps.runners.close(member.slot);
    await deps.containers.remove(member.containerId).catch(() => undefined);
    return undefined;
  }
  deps.runners.adopt(member.slot, sessionId);
  deps.logger.info(
    { sessionId, containerId: member.containerId, slot: member.slot },
    'sandbox claimed from the warm pool',
  );
  return claimedInfo(sessionId, member);
}
