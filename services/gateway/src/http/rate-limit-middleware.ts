import type { NextFunction, Request, Response } from 'express';
import { AppError } from '@sandbox/errors';
import type { AccountStore } from '../accounts/account-store';
import { admitPrincipal, sentKey } from '../auth/authenticate';
import type { Principal } from '../auth/principal';
import type { RateDecision, RateLimiter } from '../limits/rate-limiter';

const WINDOW_MS = 60_000;

/** The budget a principal's requests are counted against. */
const budgetOf = (principal: Principal): string => `key:${principal.keyId}`;

/** The X-RateLimit-* headers of every response, and 429 when the budget is spent. */
export function applyDecision(res: Response, decision: RateDecision): void {
  res.setHeader('X-RateLimit-Limit', String(decision.limit));
  res.setHeader('X-RateLimit-Remaining', String(decision.remaining));
  res.setHeader('X-RateLimit-Reset', String(decision.resetAt));
  if (!decision.allowed) {
    throw new AppError('rate_limit_exceeded', 'Rate limit exceeded; retry later', {
      retryAfter: decision.retryAfter,
      details: { limit: decision.limit },
    });
  }
}

/**
 * `Authorization: Bearer <API_KEY>` resolved to a principal (401 otherwise), then the request
 * counted against the key's per-plan requests per minute (429 past it). For a key this replica
 * holds in memory, the check that it is unchanged and the count are one Redis round trip
 * (`AccountStore.admit`, ADR 17).
 */
export function authenticateAndLimit(
  accounts: Pick<AccountStore, 'admit' | 'touchKey'>,
  limiter: RateLimiter,
) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const key = sentKey(req);
    const admitted =
      key === undefined
        ? undefined
        : await accounts.admit(key, {
            guarded: (principal, guard) =>
              limiter.consumeIfStamped(
                budgetOf(principal),
                principal.limits.requestsPerMinute,
                WINDOW_MS,
                guard,
              ),
            plain: (principal) =>
              limiter.consume(budgetOf(principal), principal.limits.requestsPerMinute, WINDOW_MS),
          });
    admitPrincipal(req, admitted?.principal, accounts);
    if (admitted !== undefined) applyDecision(res, admitted.decision);
    next();
  };
}
