import type { Invalidations } from '../cache/invalidations';
import { decide, type RateDecision, type RateLimiter } from './rate-limiter';

/**
 * An in-process sliding-window log, for a single gateway without Redis. Replicas do not share
 * it: with several gateways, configure REDIS_URL.
 */
export class MemoryRateLimiter implements RateLimiter {
  private readonly windows = new Map<string, number[]>();

  /** `invalidations`: this process's stamps, for `consumeIfStamped` (unknown without them). */
  constructor(
    private readonly now: () => number = Date.now,
    private readonly invalidations?: Pick<Invalidations, 'stamps'>,
  ) {}

  ping(): Promise<void> {
    return Promise.resolve();
  }

  consume(key: string, limit: number, windowMs: number): Promise<RateDecision> {
    const nowMs = this.now();
    const stamps = (this.windows.get(key) ?? []).filter((t) => t > nowMs - windowMs);
    const allowed = stamps.length < limit;
    if (allowed) stamps.push(nowMs);
    if (stamps.length === 0) this.windows.delete(key);
    else this.windows.set(key, stamps);
    const oldest = stamps[0] ?? nowMs;
    const newest = stamps[stamps.length - 1] ?? nowMs;
    return Promise.resolve(decide(allowed, limit, stamps.length, oldest, newest, nowMs, windowMs));
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
}
