import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { sendSoon } from './redis-send';

/** What one key's stamp was when an entry was read; null for a key never changed. */
export type Stamp = string | null;

/**
 * Change stamps shared by every gateway replica, so that a replica may answer from its own
 * cache and still see at once a change made on another. The order that makes it exact:
 *
 * - a writer commits to the database, then bumps the keys it changed;
 * - a reader reads the stamps, then the database, and caches what it read under those stamps;
 * - a later request reads the stamps again (one round trip) and uses the cached entry only if
 *   they are unchanged. A bump between a reader's two reads makes it re-read: never stale.
 *
 * A bump sets a random stamp (not a counter), so that a key lost with a Redis restart and
 * bumped again can never come back to a stamp some cache still holds.
 */
export interface Invalidations {
  /** The keys' stamps, in order; undefined when they cannot be known (use no cache then). */
  stamps(keys: readonly string[]): Promise<Stamp[] | undefined>;
  /** Marks the keys changed on every replica; call it after the change is committed. */
  bump(keys: readonly string[]): Promise<void>;
  /** `listener` runs when stamps read before may have been lost (a Redis reconnect). */
  onReset(listener: () => void): void;
}

/**
 * How long a bumped key is kept. A key that expires reads as null again, like one never
 * bumped, so no cache may keep an entry this long (MAX_CACHED_MS is far shorter).
 */
const STAMP_TTL_S = 3600;
/** The most a cache keeps an entry, whatever its stamps say. */
export const MAX_CACHED_MS = 60_000;

/** Where the stamps live in Redis (the rate limiter reads one in its script). */
export const STAMP_PREFIX = 'stamp:';

const newStamp = (): string => randomBytes(9).toString('base64url');

/** Stamps in Redis, one key per fact. */
export class RedisInvalidations implements Invalidations {
  private readonly listeners: Array<() => void> = [];

  constructor(
    private readonly redis: Redis,
    private readonly prefix = STAMP_PREFIX,
  ) {
    // A new connection may reach a Redis that lost its keys (a restart): nothing read
    // before can be trusted, and the caches start over.
    redis.on('close', () => {
      for (const listener of this.listeners) listener();
    });
  }

  async stamps(keys: readonly string[]): Promise<Stamp[] | undefined> {
    if (this.redis.status !== 'ready') return undefined;
    try {
      return await sendSoon(this.redis, () =>
        this.redis.mget(keys.map((key) => this.prefix + key)),
      );
    } catch {
      return undefined;
    }
  }

  async bump(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    const pipeline = this.redis.multi();
    for (const key of keys) pipeline.set(this.prefix + key, newStamp(), 'EX', STAMP_TTL_S);
    const results = await pipeline.exec();
    const failed = results?.find(([err]) => err !== null)?.[0];
    if (results === null || failed) throw failed ?? new Error('redis transaction aborted');
  }

  onReset(listener: () => void): void {
    this.listeners.push(listener);
  }
}

/** Keys this process remembers before it starts over (every cache then re-reads). */
const MAX_LOCAL_KEYS = 100_000;

/** Stamps in this process: enough when there is one gateway replica (no REDIS_URL). */
export class LocalInvalidations implements Invalidations {
  private readonly stampsByKey = new Map<string, string>();
  private readonly listeners: Array<() => void> = [];

  stamps(keys: readonly string[]): Promise<Stamp[] | undefined> {
    return Promise.resolve(keys.map((key) => this.stampsByKey.get(key) ?? null));
  }

  bump(keys: readonly string[]): Promise<void> {
    if (this.stampsByKey.size + keys.length > MAX_LOCAL_KEYS) {
      this.stampsByKey.clear();
      for (const listener of this.listeners) listener();
    }
    for (const key of keys) this.stampsByKey.set(key, newStamp());
    return Promise.resolve();
  }

  onReset(listener: () => void): void {
    this.listeners.push(listener);
  }
}
