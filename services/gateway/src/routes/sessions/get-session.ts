import type { OperationHandler, OperationInput } from '../operation-handler';
import { principalOf } from '../../auth/authenticate';
import { pathParam } from '../../http/validate';
import type { SessionService } from '../../sessions/session-service';

/** GET /v1/sessions/:sessionId (spec 4.2) */
export function getSession(sessions: SessionService): OperationHandler<OperationInput> {
  return async (_input, req, res) => {
    res.json(await sessions.info(principalOf(req), pathParam(req.params, 'sessionId')));
  };
}
