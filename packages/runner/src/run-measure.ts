import { readFile } from 'node:fs/promises';
import { descendants, listProcesses } from './processes';

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

const MEMORY_POLL_MS = 50;

/**
 * A run's peak memory and CPU time, polled from /proc while it runs: what GNU time cannot
 * see (a tree's sum) or what it reports only if the run ends normally.
 */
export class UsagePoller {
  /** The highest sum of resident memory seen over the tree, bytes. */
  peakRss = 0;
  /** The highest CPU time seen over the tree, ms. */
  cpuMs = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly leader: number) {
    this.timer = setInterval(() => void this.poll().catch(() => undefined), MEMORY_POLL_MS);
    void this.poll().catch(() => undefined);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async poll(): Promise<void> {
    const tree = descendants(await listProcesses(), this.leader);
    this.peakRss = Math.max(
      this.peakRss,
      tree.reduce((sum, p) => sum + p.rss, 0),
    );
    this.cpuMs = Math.max(
      this.cpuMs,
      tree.reduce((sum, p) => sum + p.cpuMs, 0),
    );
  }
}
