import type { Doubles } from '../lifecycle/in-memory-doubles';
import { doubles } from '../lifecycle/in-memory-doubles';
import type { PoolShape } from './pool-shapes';
import { WarmPool } from './warm-pool';

/* What the WarmPool's unit tests share (warm-pool.test.ts, warm-pool-members.test.ts). */

export const SHAPE: PoolShape = { size: 2, memoryMb: 1024, cpu: 0.25, diskMb: 1024 };
export const LIMITS = { memoryMb: 1024, cpu: 0.25, diskMb: 1024, pids: 0 };

/** A pool of `shapes` over in-memory doubles, retrying after 5 ms. */
export function pooled(shapes: PoolShape[] = [SHAPE]): { d: Doubles; pool: WarmPool } {
  const d = doubles();
  const pool = new WarmPool({ ...d, shapes, retryDelayMs: 5 });
  return { d, pool };
}

/** The containers the doubles were asked to create. */
export const made = (d: Doubles) => d.journal.filter((step) => step.startsWith('container.create'));
