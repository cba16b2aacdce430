import type { Stamp } from '../cache/invalidations';

/** The outcome of taking one request from a sliding-window budget. */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix time (s) at which the whole budget is available again. */
  resetAt: number;
  /** Seconds until the next request would be admitted (0 when allowed). */
  retryAfter: number;
}

/** A stamp (see `Invalidations`) that must still read `expected` for a request to count. */
export interface StampGuard {
  key: string;
  expected: Stamp;
}

/** What `consumeIfStamped` found: the stamp as it read, and the decision if it was expected. */
export interface GuardedDecision {
  /** The stamp's value; undefined when it could not be read (then nothing was counted). */
  stamp: Stamp | undefined;
  /** Present only when the stamp read `expected` and the request was counted. */
  decision?: RateDecision;
}

export interface RateLimiter {
  /** Counts one request against `key`'s budget of `limit` per `windowMs`. */
  consume(key: string, limit: number, windowMs: number): Promise<RateDecision>;
  /**
   * Reads `guard.key`'s stamp and, in the same atomic step (one round trip), counts one request
   * as `consume` does only if the stamp still reads `guard.expected`: the check of a principal
   * held in memory and its budget at once. Never rejects: a store out of reach reads as an
   * unknown stamp, and the caller goes the long way (`consume` says 503).
   */
  consumeIfStamped(
    key: string,
    limit: number,
    windowMs: number,
    guard: StampGuard,
  ): Promise<GuardedDecision>;
  /** Resolves when the store the budgets are counted in answers (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Turns window timestamps (ms) into a decision; shared by both implementations. */
export function decide(
  allowed: boolean,
  limit: number,
  count: number,
  oldestMs: number,
  newestMs: number,
  nowMs: number,
  windowMs: number,
): RateDecision {
  return {
    allowed,
    limit,
    remaining: Math.max(0, limit - count),
    resetAt: Math.ceil((newestMs + windowMs) / 1000),
    retryAfter: allowed ? 0 : Math.max(1, Math.ceil((oldestMs + windowMs - nowMs) / 1000)),
  };
}
