import { readFile } from 'node:fs/promises';

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
