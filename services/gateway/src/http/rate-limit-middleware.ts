import type { NextFunction, Request, Response } from 'express';
import { AppError } from '@sandbox/errors';
import { principalOf } from '../auth/authenticate';
import type { RateLimiter } from '../limits/rate-limiter';

const WINDOW_MS = 60_000;

/** Per-key, per-plan requests per minute, with the X-RateLimit-* headers on every response. */
export function rateLimit(limiter: RateLimiter) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const principal = principalOf(req);
    const decision = await limiter.consume(
      `key:${principal.keyId}`,
      principal.limits.requestsPerMinute,
      WINDOW_MS,
    );
    res.setHeader('X-RateLimit-Limit', String(decision.limit));
    res.setHeader('X-RateLimit-Remaining', String(decision.remaining));
    res.setHeader('X-RateLimit-Reset', String(decision.resetAt));
    if (!decision.allowed) {
      throw new AppError('rate_limit_exceeded', 'Rate limit exceeded; retry later', {
        retryAfter: decision.retryAfter,
        details: { limit: decision.limit },
      });
    }
    next();
  };
}
