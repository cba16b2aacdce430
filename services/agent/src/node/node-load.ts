import { readFile } from 'node:fs/promises';
import { availableParallelism, freemem, loadavg, totalmem } from 'node:os';

/** What the node has and uses now, for placement. */
export interface NodeLoad {
  memoryTotalBytes: number;
  memoryAvailableBytes: number;
  cpus: number;
  loadAverage: number;
}

/**
 * MemAvailable from `/proc/meminfo` (what new work can get without swapping: free memory plus
 * the page cache the kernel can drop); `os.freemem()` where there is no such line.
 */
export function memAvailable(meminfo: string): number | undefined {
  const match = /^MemAvailable:\s+(\d+) kB$/m.exec(meminfo);
  return match === null ? undefined : Number(match[1]) * 1024;
}

export async function readNodeLoad(): Promise<NodeLoad> {
  const meminfo = await readFile('/proc/meminfo', 'utf8').catch(() => '');
  return {
    memoryTotalBytes: totalmem(),
    memoryAvailableBytes: memAvailable(meminfo) ?? freemem(),
    cpus: availableParallelism(),
    loadAverage: loadavg()[0] ?? 0,
  };
}
