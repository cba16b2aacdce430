import type { OperationHandler, OperationInput } from '../operation-handler';
import { principalOf } from '../../auth/authenticate';
import { pathParam } from '../../http/validate';
import type { ContextsService } from '../../contexts/contexts-service';

/** DELETE /v1/sessions/:sessionId/contexts/:contextId (ADR 42): its process ends. */
export function deleteContext(contexts: ContextsService): OperationHandler<OperationInput> {
  return async (_input, req, res) => {
    const sessionId = pathParam(req.params, 'sessionId');
    const contextId = pathParam(req.params, 'contextId');
    await contexts.delete(principalOf(req), sessionId, contextId);
    res.json({ deleted: true, contextId });
  };
}
