import type { AgentClient } from '../agents/agent-client';
import type { AgentPool } from '../nodes/agent-pool';
import type { Principal } from '../auth/principal';
import type { SessionActivity } from './session-activity';
import type { SessionLifecycle } from './session-lifecycle';
import type { SessionRecord } from './session-record';
import type { SessionStore } from './session-store';

/** A session a request is about to use: recorded as activity, awake, and its node's agent. */
export interface OpenSession {
  session: SessionRecord;
  agent: AgentClient;
}

/**
 * The one way a request reaches a session's sandbox (execute, files, processes, previews):
 * the request counts as activity, an idle or sleeping session is woken, and the node that
 * holds it answers.
 */
export class SessionAccess {
  constructor(
    private readonly store: SessionStore,
    private readonly activity: Pick<SessionActivity, 'touch' | 'seen'>,
    private readonly agents: AgentPool,
    private readonly lifecycle: SessionLifecycle,
  ) {}

  /**
   * The caller's session (another account's is 404 session_not_found, as a missing one).
   * `vet` sees it before it is woken, so that a request it refuses leaves a sleeping session
   * asleep; what `vet` returns comes back as `vetted`.
   */
  async open<T = undefined>(
    principal: Pick<Principal, 'accountId'>,
    sessionId: string,
    vet?: (session: SessionRecord) => T,
  ): Promise<OpenSession & { vetted: T }> {
    const session = await this.activity.touch(principal.accountId, sessionId);
    const vetted = vet?.(session) as T;
    return { ...(await this.wake(session)), vetted };
  }

  /**
   * A session for the edge proxy, which has no principal: its caller checked the preview's
   * token before (a stranger can neither wake a private preview nor keep it active).
   */
  async openForPreview(sessionId: string): Promise<OpenSession> {
    return this.wake(await this.store.touchById(sessionId));
  }

  /**
   * The caller's session and its node, neither woken nor counted as activity (reads of what
   * the node keeps for a session whatever its state: its runs' output).
   */
  async locate(principal: Pick<Principal, 'accountId'>, sessionId: string): Promise<OpenSession> {
    const session = await this.store.get(principal.accountId, sessionId);
    await this.agents.recheck(session.nodeId);
    return { session, agent: this.agents.forNode(session.nodeId) };
  }

  /** Records activity on a session until the returned function is called (a long request). */
  keepActiveWhile(sessionId: string): () => void {
    return this.lifecycle.keepActiveWhile(sessionId, () => this.activity.seen(sessionId));
  }

  /** Throws 404 session_not_found when the caller's session is gone (deleted, expired). */
  async ensureExists(principal: Pick<Principal, 'accountId'>, sessionId: string): Promise<void> {
    await this.store.get(principal.accountId, sessionId);
  }

  private async wake(session: SessionRecord): Promise<OpenSession> {
    await this.agents.recheck(session.nodeId);
    const awake = await this.lifecycle.ensureAwake(session);
    return { session: awake, agent: this.agents.forNode(awake.nodeId) };
  }
}
