import type { OperationHandler, OperationInput } from '../operation-handler';
import { principalOf } from '../../auth/authenticate';
import { pathParam } from '../../http/validate';
import type { ContextsService } from '../../contexts/contexts-service';

/** POST /v1/sessions/:sessionId/contexts/:contextId/restart (ADR 42): a fresh process, same id. */
export function restartContext(contexts: ContextsService): OperationHandler<OperationInput> {
  return async (_input, req, res) => {
    const sessionId = pathParam(req.params, 'sessionId');
    const contextId = pathParam(req.params, 'contextId');
    res.json(await contexts.restart(principalOf(req), sessionId, contextId));
  };
}
