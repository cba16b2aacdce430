import type { RequestHandler } from 'express';
import type { AgentPool } from '../../agents/agent-pool';
import { pathParam } from '../../http/validate';
import type { SessionLifecycle } from '../../sessions/session-lifecycle';
import type { SessionStore } from '../../sessions/session-store';

/**
 * GET /internal/v1/previews/:sessionId — for the edge proxy: where a session's preview traffic
 * goes. Counts as activity on the session.
 */
export function resolvePreview(
  store: SessionStore,
  agents: AgentPool,
  lifecycle: SessionLifecycle,
): RequestHandler {
  return async (req, res) => {
    const session = await store.touchById(pathParam(req.params, 'sessionId'));
    await lifecycle.ensureAwake(session);
    const previewAddress = await agents.forNode(session.nodeId).previewAddress();
    res.json({ sessionId: session.id, nodeId: session.nodeId, previewAddress });
  };
}
