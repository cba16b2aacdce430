import type { SandboxLimits } from '../sandbox-runtime';
import {
  DEMAND_HOLD_MS,
  DEMAND_WINDOW_MS,
  limitsOf,
  newUse,
  sameShape,
  shapeKey,
  type PoolShape,
  type ShapeUse,
} from './pool-shapes';

/** What the warm pool's creates asked of each shape: hits, misses and the recent demand. */
export class PoolDemand {
  private readonly uses = new Map<string, ShapeUse>();

  constructor(
    private readonly shapes: PoolShape[],
    private readonly now: () => number,
    private readonly windowMs = DEMAND_WINDOW_MS,
    private readonly holdMs = DEMAND_HOLD_MS,
  ) {
    for (const shape of shapes) this.uses.set(shapeKey(shape), newUse());
  }

  useOf(shape: PoolShape): ShapeUse {
    const key = shapeKey(shape);
    let use = this.uses.get(key);
    if (use === undefined) this.uses.set(key, (use = newUse()));
    return use;
  }

  /**
   * Records a create asking for `limits` against the shape that serves it, if one does (any
   * of the same disk size, unless members serve only their own shape: `exact`).
   */
  record(limits: SandboxLimits, exact: boolean): ShapeUse | undefined {
    const shape =
      this.shapes.find((s) => s.diskMb === limits.diskMb && sameShape(limitsOf(s), limits)) ??
      (exact ? undefined : this.shapes.find((s) => s.diskMb === limits.diskMb));
    if (shape === undefined) return undefined;
    const use = this.useOf(shape);
    use.takes.push(this.now());
    return use;
  }

  /**
   * The demand of the shape: its creates in the demand window, or the highest such count of
   * the last `holdMs` when more.
   */
  of(shape: PoolShape): number {
    const use = this.useOf(shape);
    const now = this.now();
    const since = now - this.windowMs;
    while (use.takes.length > 0 && (use.takes[0] as number) < since) use.takes.shift();
    const recent = use.takes.length;
    if (recent >= use.peak || now - use.peakAt > this.holdMs) {
      use.peak = recent;
      use.peakAt = now;
    }
    return use.peak;
  }
}
