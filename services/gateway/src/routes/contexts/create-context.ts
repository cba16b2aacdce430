import { z } from 'zod';
import type { OperationHandler, OperationInput } from '../operation-handler';
import { principalOf } from '../../auth/authenticate';
import { pathParam } from '../../http/validate';
import type { ContextsService } from '../../contexts/contexts-service';

export const createContextBody = z.object({
  language: z
    .enum(['typescript', 'javascript'])
    .optional()
    .describe('default typescript (types are stripped)'),
  cwd: z.string().optional().describe('relative to /workspace; default /workspace'),
  env: z
    .record(z.string(), z.string())
    .optional()
    .describe("the context's environment variables (each cell may add its own)"),
});

/** POST /v1/sessions/:sessionId/contexts (ADR 42): a code context, its process started. */
export function createContext(
  contexts: ContextsService,
): OperationHandler<OperationInput<z.output<typeof createContextBody>>> {
  return async ({ body }, req, res) => {
    const sessionId = pathParam(req.params, 'sessionId');
    res.status(201).json(await contexts.create(principalOf(req), sessionId, body));
  };
}
