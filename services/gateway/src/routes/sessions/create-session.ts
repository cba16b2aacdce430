import { z } from 'zod';
import type { OperationInput, IdempotentHandler } from '../operation-handler';
import { principalOf } from '../../auth/authenticate';
import type { Principal } from '../../auth/principal';
import { ABSOLUTE_MAX_TTL_S, resolveTtl, resourceLimitsInput } from '../../sessions/session-limits';
import { egressInput } from '../../sessions/session-egress';
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
  egress: egressInput
    .optional()
    .describe("where the sandbox may connect (ADR 30); default: the plan's (allow-all)"),
  snapshotId: z
    .string()
    .max(100)
    .optional()
    .describe(
      "start with this snapshot's files (ADR 44); the fields this create leaves out (resourceLimits, egress, metadata) come from the snapshot's source",
    ),
  preview: z
    .strictObject({
      private: z
        .boolean()
        .optional()
        .describe(
          'true: the preview needs the X-Preview-Token header (previewToken, also in the session info)',
        ),
    })
    .optional(),
});

/** A bad ttl of any type gets field, value and the plan's max (spec part 7). */
export function checkTtl(body: unknown, principal: Principal): void {
  if (typeof body === 'object' && body !== null) {
    resolveTtl((body as { ttl?: unknown }).ttl, principal.limits);
  }
}

/** POST /v1/sessions/create (spec 4.1), idempotent under `Idempotency-Key`. */
export function createSession(
  sessions: SessionService,
): IdempotentHandler<OperationInput<z.output<typeof createSessionBody>>> {
  return async ({ body }, req) => {
    // The metadata as sent, not as rebuilt by validation (which drops keys like __proto__).
    const { metadata } = (req.body ?? {}) as { metadata?: Record<string, unknown> };
    return { status: 200, body: await sessions.create(principalOf(req), { ...body, metadata }) };
  };
}
