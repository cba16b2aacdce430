import type { OperationHandler, OperationInput } from '../operation-handler';
import { principalOf } from '../../auth/authenticate';
import { pathParam } from '../../http/validate';
import type { SessionAccess } from '../../sessions/session-access';
import { egressView, resolveEgress, type EgressInput } from '../../sessions/session-egress';
import type { SessionStore } from '../../sessions/session-store';

/** GET /v1/sessions/:sessionId/egress: the policy as recorded (does not wake the session). */
export function getEgress(store: SessionStore): OperationHandler<OperationInput> {
  return async (_input, req, res) => {
    const principal = principalOf(req);
    const session = await store.get(principal.accountId, pathParam(req.params, 'sessionId'));
    res.json(egressView(session.id, session.egress));
  };
}

/**
 * PUT /v1/sessions/:sessionId/egress: replaces the policy. It is recorded first, so that any
 * wake from then on carries it; then the session is woken if it sleeps (a request, like any
 * other) and its node applies it to the sandbox at once, cutting connections it now forbids.
 */
export function setEgress(
  store: SessionStore,
  access: SessionAccess,
): OperationHandler<OperationInput<EgressInput>> {
  return async ({ body }, req, res) => {
    const principal = principalOf(req);
    const sessionId = pathParam(req.params, 'sessionId');
    const policy = resolveEgress(body, principal.limits.egressDefault);
    await store.setEgress(principal.accountId, sessionId, policy);
    const { session, agent } = await access.open(principal, sessionId);
    await agent.setEgress(session.id, policy);
    res.json(egressView(session.id, policy));
  };
}
