import type { RequestHandler } from 'express';
import { PREVIEW_TOKEN_HEADER, type PreviewRoute } from '@sandbox/contract';
import { AppError } from '@sandbox/errors';
import { pathParam } from '../../http/validate';
import { previewTokenMatches } from '../../sessions/preview-token';
import type { SessionAccess } from '../../sessions/session-access';
import type { SessionStore } from '../../sessions/session-store';

/**
 * GET /internal/v1/previews/:sessionId — for the edge proxy: where a session's preview traffic
 * goes. Counts as activity on the session.
 */
export function resolvePreview(store: SessionStore, access: SessionAccess): RequestHandler {
  return async (req, res) => {
    const sessionId = pathParam(req.params, 'sessionId');
    // A private preview is checked before anything else: a stranger can neither wake the
    // session nor keep it active.
    const { tokenHash } = await store.previewAccess(sessionId);
    const presented = req.headers[PREVIEW_TOKEN_HEADER];
    if (
      tokenHash !== null &&
      !previewTokenMatches(typeof presented === 'string' ? presented : undefined, tokenHash)
    ) {
      throw new AppError('forbidden', 'This preview is private: send its X-Preview-Token');
    }
    const { session, agent } = await access.openForPreview(sessionId);
    const previewAddress = await agent.previewAddress();
    const route: PreviewRoute = {
      sessionId: session.id,
      nodeId: session.nodeId,
      previewAddress,
      private: tokenHash !== null,
    };
    res.json(route);
  };
}
