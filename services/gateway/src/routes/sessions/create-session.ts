import type { RequestHandler } from 'express';
import { z } from 'zod';
import { principalOf } from '../../auth/authenticate';
import { validate } from '../../http/validate';
import { idempotent, type IdempotencyOptions } from '../../idempotency/idempotent';
import { resourceLimitsInput } from '../../sessions/session-limits';
import type { SessionService } from '../../sessions/session-service';

export const createSessionBody = z.object({
  ttl: z.number().int().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  resourceLimits: resourceLimitsInput.optional(),
});

/** POST /v1/sessions/create (spec 4.1), idempotent under `Idempotency-Key`. */
export function createSession(
  sessions: SessionService,
  idempotency: IdempotencyOptions,
): RequestHandler {
  return idempotent(idempotency, async (req) => {
    const body = validate(createSessionBody, req.body ?? {});
    return { status: 200, body: await sessions.create(principalOf(req), body) };
  });
}
