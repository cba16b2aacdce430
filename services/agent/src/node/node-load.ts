import { availableParallelism, loadavg, totalmem } from 'node:os';
import { availableMemory } from '../runtime/host-memory';

/** What the node has and uses now, for placement. */
export interface NodeLoad {
  memoryTotalBytes: number;
  memoryAvailableBytes: number;
  cpus: number;
  loadAverage: number;
}

export async function readNodeLoad(): Promise<NodeLoad> {
  return {
    memoryTotalBytes: totalmem(),
    memoryAvailableBytes: await availableMemory(),
    cpus: availableParallelism(),
    loadAverage: loadavg()[0] ?? 0,
  };
}
