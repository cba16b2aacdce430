import { CONTEXT_LANGUAGES } from '@sandbox/contract';
import { z } from 'zod';
import type { OperationHandler, OperationInput } from '../operation-handler';
import { principalOf } from '../../auth/authenticate';
import { pathParam } from '../../http/validate';
import type { ContextsService } from '../../contexts/contexts-service';

export const createContextBody = z.object({
  language: z
    .enum(CONTEXT_LANGUAGES)
    .optional()
    .describe(
      'default typescript (types are stripped); bash: a shell context, whose cells are commands run in one bash that keeps its directory, variables and functions (ADR 59)',
    ),
  cwd: z.string().optional().describe('relative to /workspace; default /workspace'),
  env: z
    .record(z.string(), z.string())
    .optional()
    .describe(
      "the context's environment variables (each cell of a code context may add its own; a shell context's are set in the shell)",
    ),
});

/** POST /v1/sessions/:sessionId/contexts (ADR 42, 59): a context, its process started. */
export function createContext(
  contexts: ContextsService,
): OperationHandler<OperationInput<z.output<typeof createContextBody>>> {
  return async ({ body }, req, res) => {
    const sessionId = pathParam(req.params, 'sessionId');
    res.status(201).json(await contexts.create(principalOf(req), sessionId, body));
  };
}
