import type { ContainerSummary } from '../docker/container-client';
import {
  isPoolSlot,
  sandboxLabelKeys,
  slotOfContainerName,
  type SandboxLabels,
} from '../docker/docker-names';
import { heal } from './heal';
import type { LifecycleDeps } from './lifecycle-deps';
import { findSandbox } from './sandbox-info';

/** The session a container of this node serves; undefined for a pool member. */
function sessionOf(container: ContainerSummary, labels: SandboxLabels): string | undefined {
  // A claimed pool member carries no session label: its name is the session's.
  const slot = container.labels[labels.session] ?? slotOfContainerName(container.name);
  return slot === undefined || isPoolSlot(slot) ? undefined : slot;
}

/**
 * Desired state vs actual state, for this node: every sandbox the agent made and has not
 * removed runs (or stays paused). Run at start and then periodically.
 */
export async function reconcile(
  deps: LifecycleDeps,
): Promise<{ started: string[]; rebuilt: string[] }> {
  const labels = sandboxLabelKeys(deps.config.labelPrefix);
  const containers = await deps.containers.listByLabel(labels.node, deps.config.nodeId);
  const present = new Set<string>();
  const started: string[] = [];
  const rebuilt: string[] = [];
  const attempt = async (sessionId: string, into: string[]) => {
    try {
      const healed = await deps.locks.withLock(sessionId, async (lock) => {
        const info = await findSandbox(deps, sessionId);
        // Brought back while this pass waited for the lock (by a request or a wake): restarting
        // it now would cut the runner connection of whoever brought it back.
        if (info !== undefined && (info.running || info.paused)) return undefined;
        return heal(deps, lock, info);
      });
      if (healed !== undefined) into.push(sessionId);
    } catch (err) {
      deps.logger.error({ err, sessionId }, 'reconcile could not bring a sandbox back');
    }
  };
  for (const container of containers) {
    const sessionId = sessionOf(container, labels);
    if (sessionId === undefined) continue;
    present.add(sessionId);
    if (container.state === 'exited' || container.state === 'created') {
      await attempt(sessionId, started);
    }
  }
  for (const spec of await deps.specs.list()) {
    if (!present.has(spec.sessionId)) await attempt(spec.sessionId, rebuilt);
  }
  if (started.length + rebuilt.length > 0) {
    deps.logger.info({ started, rebuilt }, 'reconciled sandboxes');
  }
  return { started, rebuilt };
}

/** How many sessions' containers this node has (running or not; pool members are not). */
export async function countSandboxes(deps: LifecycleDeps): Promise<number> {
  const labels = sandboxLabelKeys(deps.config.labelPrefix);
  const containers = await deps.containers.listByLabel(labels.node, deps.config.nodeId);
  return containers.filter((container) => sessionOf(container, labels) !== undefined).length;
}
