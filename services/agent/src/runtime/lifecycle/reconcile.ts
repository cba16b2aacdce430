import { ALLOW_ALL, isAllowAll, type EgressPolicy } from '@sandbox/contract';
import type { ContainerSummary } from '../docker/container-client';
import type { CpuSplitContainers } from '../docker/cpu-split-containers';
import type { RunnerLinkContainers } from '../docker/runner-link-containers';
import {
  isPoolSlot,
  sandboxLabelKeys,
  slotOfContainerName,
  type SandboxLabels,
} from '../docker/docker-names';
import { addressOf } from './egress';
import { heal } from './heal';
import { currentImageId, renewStale } from './renew-stale';
import type { LifecycleDeps, SandboxAddress } from './lifecycle-deps';
import { findSandbox } from './sandbox-info';

/** The session a container of this node serves; undefined for a pool member. */
function sessionOf(container: ContainerSummary, labels: SandboxLabels): string | undefined {
  // A claimed pool member carries no session label: its name is the session's.
  const slot = container.labels[labels.session] ?? slotOfContainerName(container.name);
  return slot === undefined || isPoolSlot(slot) ? undefined : slot;
}

/**
 * The running sandboxes held to their sessions' egress policies again, in one change: after
 * an agent's restart (its rules are rewritten from the specs, none left out meanwhile) or
 * Docker's (a sandbox may have a new address).
 */
async function holdToPolicies(
  deps: LifecycleDeps,
  running: ReadonlyArray<{ sessionId: string; containerId: string }>,
): Promise<void> {
  const held: Array<{ sessionId: string; address: SandboxAddress; policy: EgressPolicy }> = [];
  for (const { sessionId, containerId } of running) {
    const spec = await deps.specs.read(sessionId).catch(() => undefined);
    const policy = spec?.egress ?? ALLOW_ALL;
    if (isAllowAll(policy) && !deps.egress.holds(sessionId)) continue;
    const address = await addressOf(deps, containerId).catch(() => undefined);
    if (address !== undefined) held.push({ sessionId, address, policy });
  }
  if (held.length === 0) return;
  await deps.egress.applyAll(held).catch((err: unknown) => {
    deps.logger.error({ err }, "could not hold the sandboxes to their sessions' egress policies");
  });
}

/** The sessions' containers made from another image than `imageId`, by session. */
function staleOf(
  containers: readonly ContainerSummary[],
  labels: SandboxLabels,
  imageId: string,
): Map<string, ContainerSummary> {
  const stale = new Map<string, ContainerSummary>();
  for (const container of containers) {
    const sessionId = sessionOf(container, labels);
    if (sessionId !== undefined && container.imageId !== imageId) stale.set(sessionId, container);
  }
  return stale;
}

/**
 * Desired state vs actual state, for this node: every sandbox the agent made and has not
 * removed runs (or stays paused). Run at start and then periodically. `renew` (the pass at
 * the agent's start): a sandbox made from another image than the agent's is first recreated
 * on it, on its kept disk (`renewStale`); it counts as rebuilt.
 */
export async function reconcile(
  deps: LifecycleDeps,
  { renew = false }: { renew?: boolean } = {},
): Promise<{ started: string[]; rebuilt: string[] }> {
  const labels = sandboxLabelKeys(deps.config.labelPrefix);
  let containers = await deps.containers.listByLabel(labels.node, deps.config.nodeId);
  const imageId = renew ? await currentImageId(deps) : undefined;
  const stale = imageId === undefined ? new Map() : staleOf(containers, labels, imageId);
  const renewed = stale.size === 0 ? [] : await renewStale(deps, stale);
  if (renewed.length > 0) {
    containers = await deps.containers.listByLabel(labels.node, deps.config.nodeId);
  }
  const present = new Set<string>();
  const running: Array<{ sessionId: string; containerId: string }> = [];
  const started: string[] = [];
  const rebuilt: string[] = [...renewed];
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
    } else if (container.state === 'running' || container.state === 'paused') {
      running.push({ sessionId, containerId: container.id });
    }
  }
  await holdToPolicies(deps, running);
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

/**
 * Removes the CPU groups and runner link directories that no container of this node has (a
 * crash or reboot left them).
 */
export async function collectLeftovers(
  parts: LifecycleDeps & { cpuSplit?: CpuSplitContainers; links?: RunnerLinkContainers },
): Promise<void> {
  const { cpuSplit, links, containers, config, logger } = parts;
  if (cpuSplit === undefined && links === undefined) return;
  const listed = await containers.listByLabel(
    sandboxLabelKeys(config.labelPrefix).node,
    config.nodeId,
  );
  const groups = (await cpuSplit?.collect(listed)) ?? [];
  if (groups.length > 0) logger.info({ removed: groups }, 'removed CPU groups left behind');
  const dirs = (await links?.collect(listed)) ?? [];
  if (dirs.length > 0) logger.info({ removed: dirs }, 'removed runner links left behind');
}
