import type { OperationHandler, OperationInput } from '../operation-handler';
import { principalOf } from '../../auth/authenticate';
import { pathParam } from '../../http/validate';
import type { ContextsService } from '../../contexts/contexts-service';

/** GET /v1/sessions/:sessionId/contexts (ADR 42) */
export function listContexts(contexts: ContextsService): OperationHandler<OperationInput> {
  return async (_input, req, res) => {
    const sessionId = pathParam(req.params, 'sessionId');
    res.json({ contexts: await contexts.list(principalOf(req), sessionId) });
  };
}
