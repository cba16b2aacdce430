import { z } from 'zod';
import type { IdempotentHandler, OperationInput } from '../operation-handler';
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

/** POST /v1/sessions/:sessionId/fork, idempotent under `Idempotency-Key`. */
export function forkSession(
  forks: ForkService,
): IdempotentHandler<OperationInput<z.output<typeof forkSessionBody>>> {
  return async ({ body }, req) => {
    const sessionId = pathParam(req.params, 'sessionId');
    return { status: 201, body: await forks.fork(principalOf(req), sessionId, body) };
  };
}
