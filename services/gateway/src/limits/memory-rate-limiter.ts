import type { Invalidations } from '../cache/invalidations';
import { decide, type RateDecision, type RateLimiter } from './rate-limiter';

/** How often idle keys' logs are dropped, at most (a pass over every key). */
export const IDLE_SWEEP_MS = 60_000;

/** One key's sliding window: the times of the requests it counted, oldest first, from `head`. */
interface WindowLog {
  times: number[];
  head: number;
  windowMs: number;
}

/**
 * An in-process sliding-window log, for a single gateway without Redis. Replicas do not share
 * it: with several gateways, configure REDIS_URL.
 *
 * A request costs the same however many the window holds: expired times leave from the front
 * (the log is in arrival order), and the array is compacted once half of it has left. A key
 * with nothing in its window is dropped by a pass every IDLE_SWEEP_MS. A clock that steps back
 * keeps a request counted at most that step longer (never shorter).
 */
export class MemoryRateLimiter implements RateLimiter {
  private readonly windows = new Map<string, WindowLog>();
  private sweptAt: number;

  /** `invalidations`: this process's stamps, for `consumeIfStamped` (unknown without them). */
  constructor(
    private readonly now: () => number = Date.now,
    private readonly invalidations?: Pick<Invalidations, 'stamps'>,
  ) {
    this.sweptAt = now();
  }

  ping(): Promise<void> {
    return Promise.resolve();
  }

  consume(key: string, limit: number, windowMs: number): Promise<RateDecision> {
    const nowMs = this.now();
    this.sweepIdle(nowMs);
    const log = this.windows.get(key) ?? { times: [], head: 0, windowMs };
    log.windowMs = windowMs;
    expire(log, nowMs);
    const allowed = log.times.length - log.head < limit;
    if (allowed) log.times.push(nowMs);
    const count = log.times.length - log.head;
    if (count === 0) this.windows.delete(key);
    else this.windows.set(key, log);
    const oldest = log.times[log.head] ?? nowMs;
    const newest = log.times[log.times.length - 1] ?? nowMs;
    return Promise.resolve(decide(allowed, limit, count, oldest, newest, nowMs, windowMs));
  }

  /** Keys tracked (a key is dropped once its window holds nothing: `sweepIdle`). */
  get size(): number {
    return this.windows.size;
  }

  /**
   * A bump between the read and the count orders this request before it, as a request that
   * read the stamps first would be on any path (ADR 17).
   */
  readonly consumeIfStamped: RateLimiter['consumeIfStamped'] = async (
    key,
    limit,
    windowMs,
    guard,
  ) => {
    const stamp = (await this.invalidations?.stamps([guard.key]))?.[0];
    if (stamp !== guard.expected) return { stamp };
    return { stamp, decision: await this.consume(key, limit, windowMs) };
  };

  close(): Promise<void> {
    this.windows.clear();
    return Promise.resolve();
  }

  /** Drops the logs of keys whose window holds nothing any more, once per IDLE_SWEEP_MS. */
  private sweepIdle(nowMs: number): void {
    if (nowMs - this.sweptAt < IDLE_SWEEP_MS) return;
    this.sweptAt = nowMs;
    for (const [key, log] of this.windows) {
      const newest = log.times[log.times.length - 1];
      if (newest === undefined || newest <= nowMs - log.windowMs) this.windows.delete(key);
    }
  }
}

/** Drops the times that have left the window, and compacts the log once half of it is gone. */
function expire(log: WindowLog, nowMs: number): void {
  const cutoff = nowMs - log.windowMs;
  const times = log.times;
  while (log.head < times.length && (times[log.head] ?? Infinity) <= cutoff) log.head += 1;
  if (log.head > 0 && log.head * 2 >= times.length) {
    log.times = times.slice(log.head);
    log.head = 0;
  }
}
