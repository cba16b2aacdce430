import { readFile } from 'node:fs/promises';
import { freemem } from 'node:os';

/**
 * MemAvailable from `/proc/meminfo` (what new work can get without swapping: free memory plus
 * the page cache the kernel can drop); undefined where there is no such line.
 */
export function memAvailable(meminfo: string): number | undefined {
  const match = /^MemAvailable:\s+(\d+) kB$/m.exec(meminfo);
  return match === null ? undefined : Number(match[1]) * 1024;
}

/** The host's available memory now (bytes): MemAvailable, or `os.freemem()` without it. */
export async function availableMemory(): Promise<number> {
  const meminfo = await readFile('/proc/meminfo', 'utf8').catch(() => '');
  return memAvailable(meminfo) ?? freemem();
}
