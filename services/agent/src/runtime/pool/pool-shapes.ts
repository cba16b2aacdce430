import type { PoolShapeSetting } from '@sandbox/config';
import type { SandboxLimits } from '../sandbox-runtime';

/* The kinds of sandbox the warm pool (warm-pool.ts) keeps, and what it has seen asked of each. */

/** One kind of sandbox the pool keeps ready, and how many of it (`SANDBOX_POOL`). */
export type PoolShape = PoolShapeSetting;

/** What a shape has seen: its creates (for the demand), served or not. */
export interface ShapeUse {
  takes: number[];
  hits: number;
  misses: number;
  /** The highest demand seen, and when: it holds the target up for `demandHoldMs`. */
  peak: number;
  peakAt: number;
}

export const DEMAND_WINDOW_MS = 60_000;
export const DEMAND_HOLD_MS = 5 * 60_000;

export const newUse = (): ShapeUse => ({ takes: [], hits: 0, misses: 0, peak: 0, peakAt: 0 });

export const shapeKey = (shape: PoolShape): string =>
  `${shape.memoryMb}:${shape.cpu}:${shape.diskMb}`;

export function limitsOf(shape: PoolShape): SandboxLimits {
  return { memoryMb: shape.memoryMb, cpu: shape.cpu, diskMb: shape.diskMb, pids: 0 };
}

export function sameShape(limits: SandboxLimits, shape: SandboxLimits): boolean {
  return limits.memoryMb === shape.memoryMb && limits.cpu === shape.cpu;
}
