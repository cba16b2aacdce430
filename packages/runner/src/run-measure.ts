import { readFile } from 'node:fs/promises';
import { descendants, listProcessesNow } from './processes';

/** GNU time's output format: elapsed, user, system seconds and max RSS in KB. */
export const TIME_FORMAT = 'timing %e %U %S %M';

export interface Timing {
  cpuTimeMs: number;
  maxRssBytes: number;
}

/** Parses what `time -f TIME_FORMAT -o file` wrote (the last `timing` line wins). */
export function parseTiming(text: string): Timing | undefined {
  const line = text
    .split('\n')
    .reverse()
    .find((l) => l.startsWith('timing '));
  if (line === undefined) return undefined;
  const [, , user, system, maxRssKb] = line.split(' ');
  const cpu = (Number(user) + Number(system)) * 1000;
  const rss = Number(maxRssKb) * 1024;
  if (!Number.isFinite(cpu) || !Number.isFinite(rss)) return undefined;
  return { cpuTimeMs: Math.round(cpu), maxRssBytes: rss };
}

export async function readTiming(file: string): Promise<Timing | undefined> {
  return parseTiming(await readFile(file, 'utf8').catch(() => ''));
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
 * A run's peak memory and CPU time, polled from /proc while it runs: what GNU time cannot
 * see (a tree's sum) or what it reports only if the run ends normally. The first poll comes
 * MEMORY_POLL_MS after the start (a run shorter than that is GNU time's alone), and polls
 * never take more than POLL_DUTY of the runner: with many sessions busy at once, measuring
 * must not be what makes their runs slow.
 */
export class UsagePoller {
  /** The highest sum of resident memory seen over the tree, bytes. */
  peakRss = 0;
  /** The highest CPU time seen over the tree, ms. */
  cpuMs = 0;
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
      this.cpuMs = Math.max(
        this.cpuMs,
        tree.reduce((sum, p) => sum + p.cpuMs, 0),
      );
    } catch {
      // /proc unreadable for a moment: the next poll tries again
    }
    const tookMs = Number(process.hrtime.bigint() - begun) / 1e6;
    this.schedule(nextPollDelayMs(tookMs));
  }
}
