import type { Principal } from '../auth/principal';
import type { SessionAccess } from '../sessions/session-access';

/** Spec 2.10 */
export interface KillResult {
  killed: number;
  pids: number[];
}

/** Killing a session's processes (spec 4.5). Counts as activity. */
export class ProcessesService {
  constructor(private readonly access: SessionAccess) {}

  async kill(
    principal: Principal,
    sessionId: string,
    pid: number | undefined,
  ): Promise<KillResult> {
    const { session, agent } = await this.access.open(principal, sessionId);
    const pids = await agent.killProcesses(session.id, pid);
    return { killed: pids.length, pids };
  }
}
