import type { DockerRuntimeParts } from './docker-runtime-parts';

/** How long the node must have served no request before it makes spare log files. */
const SPARE_STOCK_QUIET_MS = 1000;

/** What the runtime itself does as the parts start. */
export interface StartHooks {
  /** A container ended (died, removed): what the runtime keeps of it goes. */
  containerEnded: (containerId: string) => void;
  /** Checks every sandbox again (the runtime's reconcile). */
  reconcile: () => Promise<unknown>;
  /** Ends the making of spare log files ahead of need (aborted at stop). */
  stocking: AbortSignal;
}

/**
 * Starts a Docker runtime's parts: the watch of Docker's events, the host's set-up, the
 * egress proxy, the package installer, the warm pool, and the making of spare log files in
 * the node's quiet moments.
 */
export async function startParts(parts: DockerRuntimeParts, hooks: StartHooks): Promise<void> {
  const { cache, pool, logger } = parts;
  // A pool member that died (dockerd stopping, an OOM, a kill from outside) is replaced at
  // once, never handed to a session. A container that ended has its counter files closed.
  cache?.onEnded((containerId) => pool?.dropEnded(containerId));
  cache?.onEnded(hooks.containerEnded);
  // Events were missed (dockerd restarted, say): the host set-up and every sandbox are
  // checked again now rather than at the next periodic pass.
  cache?.onResumed(() => {
    logger.warn('docker event stream back after a loss: checking the host and sandboxes');
    void parts
      .prepareHost()
      .then(hooks.reconcile)
      .catch((err: unknown) => logger.error({ err }, 'reconcile after a docker restart failed'));
  });
  await cache?.watch();
  const host = await parts.prepareHost();
  if (host.gateway !== undefined) {
    // Without it, a policy with domain rules is refused (503); every other policy holds.
    await parts.startEgressProxy?.(host.gateway, host.dnsServers).catch((err: unknown) => {
      logger.error({ err }, 'the egress proxy did not start: domain rules cannot be held');
    });
  }
  parts.installer.prepare();
  await pool?.start();
  // In pauses only: a file made between two requests of a burst would slow the next one.
  void parts.logs.stockSpares(
    () => !(parts.load?.quietFor(SPARE_STOCK_QUIET_MS) ?? true),
    hooks.stocking,
  );
}

/** Stops what `startParts` started, keeping the newest runs' logs for the next start. */
export async function stopParts(parts: DockerRuntimeParts): Promise<void> {
  parts.logs.flush(); // the newest runs' logs, made off their path, kept across the restart
  parts.installer.close();
  parts.stopEgressProxy?.();
  await parts.pool?.stop();
  await parts.cpuSplit?.close();
  await parts.workspaces.close?.();
  parts.cache?.unwatch();
}
