import type { RequestHandler } from 'express';
import { principalOf } from '../../auth/authenticate';
import type { SessionService } from '../../sessions/session-service';

/** DELETE /v1/sessions/:sessionId (spec 4.3) */
export function deleteSession(sessions: SessionService): RequestHandler<{ sessionId: string }> {
  return async (req, res) => {
    await sessions.delete(principalOf(req), req.params.sessionId);
    res.json({ deleted: true, sessionId: req.params.sessionId });
  };
}
