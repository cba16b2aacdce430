import type { PoolShape } from './pool-shapes';

/**
 * The warm pool's growth in idle time (ADR 46): past what its creates ask for, towards a
 * budget of the node's memory, while the node serves nothing; given back when memory runs low.
 */
export interface IdleFillSettings {
  /** Members the pool may hold in idle time, all shapes together (0: no idle fill). */
  members: number;
  /** How long the node must have served nothing before the pool grows past its demand. */
  afterMs: number;
  /**
   * Available memory (bytes) below which members made in idle time are given back. Growth
   * resumes only once the whole budget fits above it again (`members × memberBytes` more).
   */
  floorBytes: number;
  /** The memory a waiting member holds (bytes), as measured: how many to give back. */
  memberBytes: number;
  /** The node's available memory now (MemAvailable, bytes). */
  available: () => Promise<number>;
}

/** What one look at the node found: how many members made in idle time to give back. */
export interface IdleLook {
  giveBack: number;
}

/** Whether the pool may grow in idle time now, and how far; looked at by the pool's tick. */
export class IdleFill {
  private pressed = false;

  constructor(
    private readonly settings: IdleFillSettings,
    private readonly quietFor: ((ms: number) => boolean) | undefined,
  ) {}

  /** Reads the node's memory: below the floor, members go back until it is above again. */
  async look(): Promise<IdleLook> {
    const { floorBytes, memberBytes, members } = this.settings;
    const available = await this.settings.available();
    if (available < floorBytes) {
      this.pressed = true;
      return { giveBack: Math.ceil((floorBytes - available) / memberBytes) };
    }
    if (this.pressed && available >= floorBytes + members * memberBytes) this.pressed = false;
    return { giveBack: 0 };
  }

  /** Whether the pool grows towards its budget now: the node is idle, with memory to spare. */
  growing(): boolean {
    return !this.pressed && (this.quietFor?.(this.settings.afterMs) ?? true);
  }

  /** Whether members made in idle time are kept (memory is not low). */
  keeping(): boolean {
    return !this.pressed;
  }

  /** The members of `shape` in the idle budget: the budget shared in proportion to sizes. */
  share(shape: PoolShape, shapes: PoolShape[]): number {
    return idleShares(this.settings.members, shapes)[shapes.indexOf(shape)] ?? 0;
  }
}

/**
 * `members` shared among `shapes` in proportion to their sizes (each at least its size is
 * not promised here: the pool keeps sizes anyway); what rounding leaves goes to the first.
 */
export function idleShares(members: number, shapes: PoolShape[]): number[] {
  const sizes = shapes.reduce((sum, shape) => sum + shape.size, 0);
  if (sizes === 0 || members <= 0) return shapes.map(() => 0);
  const shares = shapes.map((shape) => Math.floor((members * shape.size) / sizes));
  shares[0] = (shares[0] ?? 0) + members - shares.reduce((sum, n) => sum + n, 0);
  return shares;
}

/**
 * How many members the idle budget holds: `percent` of the node's memory at `memberBytes`
 * each, within the pool's most (`SANDBOX_POOL_MAX`).
 */
export function idleMembers(
  percent: number,
  totalBytes: number,
  memberBytes: number,
  maxMembers: number,
): number {
  if (percent <= 0 || memberBytes <= 0) return 0;
  return Math.min(maxMembers, Math.floor((totalBytes * percent) / 100 / memberBytes));
}
