import type { Logger } from '@sandbox/logger';

/** What the watch last saw of the engine. */
export interface EngineStatus {
  /** A probe has gone unanswered for longer than `wedgedAfterMs`. */
  wedged: boolean;
  /** How long the last answered probe took, in ms (undefined before the first answer). */
  lastProbeMs: number | undefined;
  /** How long the probe under way has waited, in ms (0 when none waits). */
  waitingMs: number;
}

export interface EngineWatchOptions {
  /**
   * A cheap call of the engine that takes libnetwork's controller lock (a network inspect):
   * it hangs while that lock is held for good.
   */
  probe: () => Promise<unknown>;
  /** Between two probes; a probe under way is never doubled. */
  intervalMs: number;
  /** A probe unanswered this long means a wedged engine. */
  wedgedAfterMs: number;
  logger: Logger;
  now?: () => number;
}

/** What the operator reads when the engine wedges (docs/operations.md, "A wedged dockerd"). */
const WEDGED_MESSAGE =
  'the Docker engine has not answered a network inspect: it is likely wedged in the libnetwork ' +
  'deadlock of Docker 20.10 (moby/moby#46661). Creates and removals on this node hang until ' +
  'dockerd restarts: cordon the node, take a goroutine dump (kill -USR1 <dockerd pid>), then ' +
  'restart dockerd (systemctl restart docker, or restart_docker of scripts/lib/ensure-docker.sh). ' +
  "Without live-restore the restart stops this node's sandboxes: the agent rebuilds them from " +
  'their disks, their processes are lost. See docs/operations.md, "A wedged dockerd".';

/**
 * Probes the engine now and then with a call that needs libnetwork's controller lock, and
 * says when one goes unanswered too long: the engine is wedged (the deadlock of
 * `SerialNetworkLeaves`, or another), and only a restart of dockerd ends it. It tells the
 * operator (an error in the log, once per wedge; the metrics; the health service through
 * `onChange`); it never restarts dockerd itself: without live-restore that stops every
 * sandbox of the node.
 */
export class EngineWatch {
  private timer: NodeJS.Timeout | undefined;
  /** When the probe under way began; undefined when none is under way. */
  private since: number | undefined;
  private lastProbeMs: number | undefined;
  private wedged = false;
  private readonly listeners: Array<(wedged: boolean) => void> = [];
  private readonly now: () => number;

  constructor(private readonly options: EngineWatchOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Called with the new state each time the engine wedges or answers again. */
  onChange(listener: (wedged: boolean) => void): void {
    this.listeners.push(listener);
  }

  start(): void {
    if (this.timer !== undefined) return;
    this.tick();
    this.timer = setInterval(() => this.tick(), this.options.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  status(): EngineStatus {
    return {
      wedged: this.wedged,
      lastProbeMs: this.lastProbeMs,
      waitingMs: this.since === undefined ? 0 : this.now() - this.since,
    };
  }

  /** Starts a probe, or judges the one under way. */
  private tick(): void {
    const since = this.since;
    if (since !== undefined) {
      if (!this.wedged && this.now() - since >= this.options.wedgedAfterMs) {
        this.options.logger.error({ waitingMs: this.now() - since }, WEDGED_MESSAGE);
        this.change(true);
      }
      return;
    }
    const started = this.now();
    this.since = started;
    void this.options
      .probe()
      .catch((err: unknown) => {
        // An answer, even an error, is not a wedge: the engine's lock was free.
        this.options.logger.debug({ err }, 'the engine probe failed');
      })
      .then(() => {
        this.since = undefined;
        this.lastProbeMs = this.now() - started;
        if (this.wedged) {
          this.options.logger.warn(
            { waitedMs: this.lastProbeMs },
            'the Docker engine answers again: it is no longer wedged',
          );
          this.change(false);
        }
      });
  }

  private change(wedged: boolean): void {
    this.wedged = wedged;
    for (const listener of this.listeners) listener(wedged);
  }
}
