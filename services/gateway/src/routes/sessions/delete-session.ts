import type { OperationHandler, OperationInput } from '../operation-handler';
import { principalOf } from '../../auth/authenticate';
import { pathParam } from '../../http/validate';
import type { SessionService } from '../../sessions/session-service';

/** DELETE /v1/sessions/:sessionId (spec 4.3) */
export function deleteSession(sessions: SessionService): OperationHandler<OperationInput> {
  return async (_input, req, res) => {
    const sessionId = pathParam(req.params, 'sessionId');
    await sessions.delete(principalOf(req), sessionId);
    res.json({ deleted: true, sessionId });
  };
}
