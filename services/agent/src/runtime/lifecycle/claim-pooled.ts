import { containerLimits } from '../docker/container-spec';
import { containerName } from '../docker/docker-names';
import type { SessionLock } from '../locks/session-locks';
import type { SandboxInfo, SandboxSpec } from '../sandbox-runtime';
import type { LifecycleDeps, PoolMember } from './lifecycle-deps';

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
 * The session's sandbox from the warm pool: a member's workspace and container take the
 * session's names, its limits the spec's, and its runner serves the session. Undefined when
 * the pool has no member for the spec or the claim failed early; the caller then makes the
 * sandbox the slow way, on the adopted workspace if the claim got that far. The spec is
 * recorded first, so that a claim cut short by a crash is rebuilt, never orphaned.
 */
export async function claimPooled(
  deps: LifecycleDeps,
  lock: SessionLock,
  spec: SandboxSpec,
  prepare?: PrepareMember,
): Promise<SandboxInfo | undefined> {
  const { pool } = deps;
  const { sessionId } = spec;
  lock.check(sessionId);
  const member = pool?.take(spec.limits);
  if (pool === undefined || member === undefined) return undefined;
  await deps.specs.write(spec);
  try {
    if (prepare !== undefined) await prepare(member);
    await pool.adoptWorkspace(member, sessionId);
  } catch (err) {
    deps.logger.warn({ err, sessionId, slot: member.slot }, 'pool claim failed; starting cold');
    await pool
      .discard(member)
      .catch((discardErr: unknown) =>
        deps.logger.error({ err: discardErr, slot: member.slot }, 'pool member removal failed'),
      );
    return undefined;
  }
  try {
    await deps.containers.rename(member.containerId, containerName(sessionId));
    if (!sameLimits(deps, member, spec)) {
      await deps.containers.updateLimits(
        member.containerId,
        containerLimits(spec.limits, deps.config),
      );
    }
  } catch (err) {
    // The workspace is the session's now: only the container is replaced.
    deps.logger.warn({ err, sessionId, slot: member.slot }, 'pool claim failed; new container');
    deps.runners.close(member.slot);
    await deps.containers.remove(member.containerId).catch(() => undefined);
    return undefined;
  }
  deps.runners.adopt(member.slot, sessionId);
  deps.logger.info(
    { sessionId, containerId: member.containerId, slot: member.slot },
    'sandbox claimed from the warm pool',
  );
  return {
    sessionId,
    containerId: member.containerId,
    status: 'running',
    filesCount: 0,
    activeProcesses: 0,
  };
}
