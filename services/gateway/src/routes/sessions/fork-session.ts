import { z } from 'zod';
import type { IdempotentHandler, OperationInput } from '../operation-handler';
import { sessionSchema } from '../../api/schemas';
import { principalOf } from '../../auth/authenticate';
import type { ForkService } from '../../forks/fork-service';
import { pathParam } from '../../http/validate';

export const MAX_FORKS = 10;

export const forkSessionBody = z.strictObject({
  count: z
    .number()
    .int()
    .min(1)
    .max(MAX_FORKS)
    .optional()
    .describe('forks to make, 1 to 10; default 1'),
  processes: z
    .boolean()
    .optional()
    .describe(
      "default true: keep the source's running processes where the node can; processesKept says whether it did (files are always kept)",
    ),
});

export const forkResultSchema = z.strictObject({
  sessions: z.array(sessionSchema).describe('the forks, each as a create answers it'),
  processesKept: z
    .boolean()
    .describe("whether the forks have the source's processes; false: its files only (ADR 43)"),
});

/** The operation table's row of POST /v1/sessions/:sessionId/fork (ADR 43). */
export const forkSessionOperation = {
  method: 'post',
  path: '/sessions/:sessionId/fork',
  summary:
    'Fork a running session into 1 to 10 new sessions, each with a copy-on-write copy of its files, its limits, egress policy and metadata (a sleeping source is woken first)',
  scope: 'sessions',
  body: forkSessionBody,
  idempotent: true,
  success: { status: 201, schema: forkResultSchema, description: 'The forks' },
  errors: [
    'payload_too_large',
    'session_not_found',
    'session_limit_exceeded',
    'request_timeout',
    'service_unavailable',
  ],
} as const;

/** POST /v1/sessions/:sessionId/fork, idempotent under `Idempotency-Key`. */
export function forkSession(
  forks: ForkService,
): IdempotentHandler<OperationInput<z.output<typeof forkSessionBody>>> {
  return async ({ body }, req) => {
    const sessionId = pathParam(req.params, 'sessionId');
    return { status: 201, body: await forks.fork(principalOf(req), sessionId, body) };
  };
}
