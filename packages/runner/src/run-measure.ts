import { descendants, listProcessesNow } from './processes';

/** What a run used, as the spawner measured it when it reaped the run (ADR 21). */
export interface Timing {
  cpuTimeMs: number;
  maxRssBytes: number;
}

/** How often a run's tree is measured, at the most. */
const MEMORY_POLL_MS = 50;
/** The share of the runner's time a poll may take: a tree of many processes is read less often. */
const POLL_DUTY = 0.02;

/** How long after a poll that took `tookMs` the next one comes. */
export function nextPollDelayMs(tookMs: number): number {
  return Math.max(MEMORY_POLL_MS, tookMs / POLL_DUTY);
}

/**
 * A code run's peak memory, polled from /proc while it runs: the sum over its tree, which the
 * spawner's wait4 does not give. The first poll comes MEMORY_POLL_MS after the start (a run
 * shorter than that is measured by the spawner alone), and polls never take more than
 * POLL_DUTY of the runner: with many sessions busy at once, measuring must not be what makes
 * their runs slow. Command runs are measured alike by the front (front/run_usage.go).
 */
export class UsagePoller {
  /** The highest sum of resident memory seen over the tree, bytes. */
  peakRss = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly leader: number,
    private readonly procRoot = '/proc',
  ) {
    this.schedule(MEMORY_POLL_MS);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => this.poll(), delayMs);
  }

  private poll(): void {
    const begun = process.hrtime.bigint();
    try {
      const tree = descendants(listProcessesNow(this.procRoot), this.leader);
      this.peakRss = Math.max(
        this.peakRss,
        tree.reduce((sum, p) => sum + p.rss, 0),
      );
    } catch {
      // /proc unreadable for a moment: the next poll tries again
    }
    const tookMs = Number(process.hrtime.bigint() - begun) / 1e6;
    this.schedule(nextPollDelayMs(tookMs));
  }
}
