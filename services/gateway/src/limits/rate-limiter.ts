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

export interface RateLimiter {
  /** Counts one request against `key`'s budget of `limit` per `windowMs`. */
  consume(key: string, limit: number, windowMs: number): Promise<RateDecision>;
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
