import type { AgentPool } from '../agents/agent-pool';
import type { Principal } from '../auth/principal';
import type { SessionLifecycle } from '../sessions/session-lifecycle';
import type { SessionStore } from '../sessions/session-store';

/** Spec 2.10 */
export interface KillResult {
  killed: number;
  pids: number[];
}

/** Killing a session's processes (spec 4.5). Counts as activity. */
export class ProcessesService {
  constructor(
    private readonly store: SessionStore,
    private readonly agents: AgentPool,
    private readonly lifecycle: SessionLifecycle,
  ) {}

  async kill(
    principal: Principal,
    sessionId: string,
    pid: number | undefined,
  ): Promise<KillResult> {
    const session = await this.store.touch(principal.accountId, sessionId);
    await this.lifecycle.ensureAwake(session);
    const pids = await this.agents.forNode(session.nodeId).killProcesses(session.id, pid);
    return { killed: pids.length, pids };
  }
}
