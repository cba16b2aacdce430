import type { RequestHandler } from 'express';
import { principalOf } from '../../auth/authenticate';
import type { SessionService } from '../../sessions/session-service';

/** GET /v1/sessions/:sessionId (spec 4.2) */
export function getSession(sessions: SessionService): RequestHandler<{ sessionId: string }> {
  return async (req, res) => {
    res.json(await sessions.info(principalOf(req), req.params.sessionId));
  };
}
