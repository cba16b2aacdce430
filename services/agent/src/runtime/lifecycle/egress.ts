import { ALLOW_ALL, isAllowAll, type EgressPolicy } from '@sandbox/contract';
import { AppError } from '@sandbox/errors';
import type { SandboxInfo } from '../sandbox-runtime';
import type { LifecycleDeps, SandboxAddress } from './lifecycle-deps';
import { findSandbox, inspectSandbox } from './sandbox-info';

/** A running sandbox's address on the sandbox network, and a pid in its network namespace. */
export async function addressOf(
  deps: Pick<LifecycleDeps, 'containers' | 'config'>,
  containerId: string,
): Promise<SandboxAddress> {
  const state = await deps.containers.find(containerId);
  const ip = state?.addresses[deps.config.sandboxNetwork];
  if (state === undefined || !state.running || ip === undefined || ip === '' || state.pid <= 0) {
    throw new AppError('service_unavailable', "The session's sandbox has no network address", {
      retryAfter: 2,
    });
  }
  return { ip, pid: state.pid };
}

/**
 * Holds a session's running sandbox to `policy` (its spec's by default): by its address on
 * the sandbox network and its network namespace, which each start of a container changes.
 * Every path that starts or hands over a sandbox calls it before the session may use it.
 */
export async function enforceEgress(
  deps: Pick<LifecycleDeps, 'containers' | 'egress' | 'config'>,
  sessionId: string,
  containerId: string,
  policy: EgressPolicy = ALLOW_ALL,
): Promise<void> {
  // Nothing is held on this node at all: an allow-all sandbox costs nothing.
  if (isAllowAll(policy) && deps.egress.count() === 0) return;
  const address = await addressOf(deps, containerId);
  try {
    await deps.egress.apply(sessionId, address, policy);
  } catch (err) {
    throw new AppError('service_unavailable', "The session's egress policy could not be applied", {
      cause: err,
      retryAfter: 5,
    });
  }
}

/**
 * The new policy becomes the session's spec's (kept for its next start) and, if its sandbox
 * runs, the sandbox's at once.
 */
export function replaceEgress(
  deps: LifecycleDeps,
  sessionId: string,
  policy: EgressPolicy,
): Promise<SandboxInfo> {
  return deps.locks.withLock(sessionId, async () => {
    const spec = await deps.specs.read(sessionId);
    if (spec === undefined) {
      throw new AppError('session_not_found', `Session ${sessionId} not found on this node`);
    }
    await deps.specs.write({ ...spec, egress: policy });
    const container = await findSandbox(deps, sessionId);
    if (container?.running === true) {
      await enforceEgress(deps, sessionId, container.id, policy);
    }
    return inspectSandbox(deps, sessionId);
  });
}
