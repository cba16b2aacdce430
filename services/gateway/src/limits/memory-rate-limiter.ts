import { decide, type RateDecision, type RateLimiter } from './rate-limiter';

/**
 * An in-process sliding-window log, for a single gateway without Redis. Replicas do not share
 * it: with several gateways, configure REDIS_URL.
 */
export class MemoryRateLimiter implements RateLimiter {
  private readonly windows = new Map<string, number[]>();

  constructor(private readonly now: () => number = Date.now) {}

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

  close(): Promise<void> {
    this.windows.clear();
    return Promise.resolve();
  }
}
