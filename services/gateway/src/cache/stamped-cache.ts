import { MAX_CACHED_MS, type Invalidations, type Stamp } from './invalidations';

interface Entry<V> {
  value: V;
  stamps: Stamp[];
  cachedAt: number;
}

/** A read of the stamps, to be handed back when caching what was read after it. */
export interface StampRead {
  readonly stamps: Stamp[] | undefined;
  readonly generation: number;
}

/**
 * Values read from the database, kept by this replica while the stamps they were read under
 * are unchanged (see `Invalidations`), and never longer than MAX_CACHED_MS. Bounded: past
 * `maxEntries` the oldest go first.
 */
export class StampedCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  /** Counts resets, so that a read begun before one is not cached after it. */
  private generation = 0;

  constructor(
    private readonly invalidations: Invalidations,
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {
    invalidations.onReset(() => this.clear());
  }

  /** Reads the stamps of `keys` (one round trip), for `lookup` and `keep`. */
  async readStamps(keys: readonly string[]): Promise<StampRead> {
    const generation = this.generation;
    return { stamps: await this.invalidations.stamps(keys), generation };
  }

  /** The value cached under `id`, if it was read under exactly these stamps. */
  lookup(id: string, read: StampRead): V | undefined {
    const entry = this.entries.get(id);
    if (entry === undefined || read.stamps === undefined) return undefined;
    if (read.generation !== this.generation || this.now() - entry.cachedAt >= MAX_CACHED_MS) {
      this.entries.delete(id);
      return undefined;
    }
    const same = entry.stamps.every((stamp, i) => stamp === read.stamps?.[i]);
    return same ? entry.value : undefined;
  }

  /**
   * The entry under `id` (unless older than MAX_CACHED_MS) with the stamps it was read under,
   * for a caller that reads the stamps in a round trip of its own (one that does more): a
   * read built from what it found then goes to `lookup` and `keep` as `readStamps`'s would.
   */
  held(id: string): { value: V; stamps: readonly Stamp[]; generation: number } | undefined {
    const entry = this.entries.get(id);
    if (entry === undefined || this.now() - entry.cachedAt >= MAX_CACHED_MS) return undefined;
    return { value: entry.value, stamps: entry.stamps, generation: this.generation };
  }

  /**
   * The value cached under `id` however its stamps stand now, unless it is older than
   * MAX_CACHED_MS: for decisions that may use a stale record (see SessionActivity.seen).
   */
  peek(id: string): V | undefined {
    const entry = this.entries.get(id);
    if (entry === undefined || this.now() - entry.cachedAt >= MAX_CACHED_MS) return undefined;
    return entry.value;
  }

  /** Caches `value`, read from the database after `read`; no-op when stamps were unknown. */
  keep(id: string, value: V, read: StampRead): void {
    if (read.stamps === undefined || read.generation !== this.generation) return;
    this.entries.delete(id);
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.entries.delete(oldest.value);
    }
    this.entries.set(id, { value, stamps: read.stamps, cachedAt: this.now() });
  }

  forget(id: string): void {
    this.entries.delete(id);
  }

  clear(): void {
    this.generation += 1;
    this.entries.clear();
  }
}
