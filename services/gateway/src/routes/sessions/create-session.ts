import type { RequestHandler } from 'express';
import { z } from 'zod';
import { principalOf } from '../../auth/authenticate';
import { validate } from '../../http/validate';
import { idempotent, type IdempotencyOptions } from '../../idempotency/idempotent';
import { ABSOLUTE_MAX_TTL_S, resolveTtl, resourceLimitsInput } from '../../sessions/session-limits';
import type { SessionService } from '../../sessions/session-service';

export const createSessionBody = z.object({
  ttl: z
    .number()
    .int()
    .min(1)
    .max(ABSOLUTE_MAX_TTL_S)
    .optional()
    .describe('seconds; default 86400; at most the plan maximum (free 86400, paid 604800)'),
  metadata: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('free-form JSON object, at most 16 KB, returned unchanged'),
  resourceLimits: resourceLimitsInput.optional(),
  preview: z
    .strictObject({
      private: z
        .boolean()
        .optional()
        .describe('true: the preview needs the X-Preview-Token header (previewToken, shown once)'),
    })
    .optional(),
});

/** POST /v1/sessions/create (spec 4.1), idempotent under `Idempotency-Key`. */
export function createSession(
  sessions: SessionService,
  idempotency: IdempotencyOptions,
): RequestHandler {
  return idempotent(idempotency, async (req) => {
    const raw = (req.body ?? {}) as { ttl?: unknown; metadata?: unknown };
    const principal = principalOf(req);
    // A bad ttl of any type gets field, value and max (spec part 7).
    if (typeof raw === 'object' && raw !== null) resolveTtl(raw.ttl, principal.limits);
    const body = validate(createSessionBody, raw);
    // The metadata as parsed, not as rebuilt by validation (which drops keys like __proto__).
    const metadata = raw.metadata as Record<string, unknown> | undefined;
    return { status: 200, body: await sessions.create(principal, { ...body, metadata }) };
  });
}
