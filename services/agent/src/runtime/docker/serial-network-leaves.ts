import type { Logger } from '@sandbox/logger';
import type { ContainerClient } from './container-client';
import { KeyedQueue } from '../locks/keyed-queue';
import { ForwardingContainers } from './forwarding-containers';

/**
 * Whether a Docker engine of `version` (`20.10.24+dfsg1`, `24.0.7`...) has the deadlock of
 * `SerialNetworkLeaves`: libnetwork's fix came with 20.10.27 and 23.0; older engines, and one
 * whose version cannot be read, have it.
 */
export function hasLeaveDeadlock(version: string): boolean {
  const match = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version.trim());
  if (match === null) return true;
  const [major, minor, patch] = match.slice(1).map(Number) as [number, number, number];
  if (major !== 20) return major < 20;
  return minor < 10 || (minor === 10 && patch < 27);
}

/**
 * Running containers leave their networks one at a time per network, before they are removed.
 *
 * Docker 20.10.24's libnetwork (Debian 12's docker.io) deadlocks when a container leaves a
 * network while the removal of another endpoint of the same network is processed: the leave
 * (`endpoint.sbLeave` → `network.getSvcRecords`) holds the network's lock and waits for the
 * controller's, and the controller's watch loop (`processEndpointDelete`) holds the
 * controller's and waits for the network's (moby/moby#46661, fixed in moby/libnetwork#2679
 * after 20.10.24). Every later network call of the engine then hangs, until dockerd restarts.
 * A forced removal of a running container makes that leave (its exit releases its networks),
 * so removals running together (a burst of deletes) race each other.
 *
 * So a removal takes the container off its networks first, by `disconnect`, which answers once
 * the container has left: under a lock per network, so no two leaves of a network overlap.
 * The removal itself, the slow part (the kill, the wait for the exit, the layer), then runs
 * with the others, and finds no network to leave. A disconnect that fails is logged and the
 * removal goes on: a removal is never lost to this (it then leaves as it did before).
 */
export class SerialNetworkLeaves extends ForwardingContainers {
  private readonly leaves = new KeyedQueue();
  private needed: Promise<boolean> | undefined;

  constructor(
    inner: ContainerClient,
    private readonly logger: Logger,
    /** The engine's version (`docker version`): leaves are serialised only where it needs it. */
    private readonly engineVersion: () => Promise<string> = () => Promise.resolve(''),
  ) {
    super(inner);
  }

  /** Whether this engine has the deadlock; asked once (an engine that will not say: it has). */
  private serialised(): Promise<boolean> {
    this.needed ??= this.engineVersion().then(
      (version) => {
        const has = hasLeaveDeadlock(version);
        if (has) {
          this.logger.info(
            { engineVersion: version },
            "the engine has libnetwork's leave deadlock (moby/moby#46661): containers leave " +
              'their networks one at a time before their removal',
          );
        }
        return has;
      },
      () => true,
    );
    return this.needed;
  }

  override async remove(container: string): Promise<boolean> {
    const state = await this.inner.find(container).catch(() => undefined);
    // A container that does not run has no sandbox attached: its removal leaves nothing.
    if (state?.running === true && (await this.serialised())) {
      for (const network of Object.keys(state.addresses)) await this.leave(container, network);
    }
    return this.inner.remove(container);
  }

  /** A leave of `network` by a container, alone on that network. */
  override disconnect(container: string, network: string): Promise<boolean> {
    return this.leaves.run(network, () => this.inner.disconnect(container, network));
  }

  private async leave(container: string, network: string): Promise<void> {
    try {
      await this.disconnect(container, network);
    } catch (err) {
      this.logger.warn(
        { err, container, network },
        'could not take the container off its network before its removal: removing it anyway',
      );
    }
  }
}
