import type { ContextLanguage } from '@sandbox/contract';
import type { CodeContextRecord } from '../agents/agent-messages';
import type { Principal } from '../auth/principal';
import { resolveWorkingDir } from '../files/workspace-path';
import type { SessionAccess } from '../sessions/session-access';
import { checkEnv } from '../execute/execute-request';
import { checkContextId } from '../execute/context-id';

export interface CreateContextInput {
  language?: ContextLanguage | undefined;
  cwd?: string | undefined;
  env?: Record<string, string> | undefined;
}

/**
 * A session's code contexts (ADR 42): each a long-lived process in its sandbox, held by its
 * runner, which also enforces the per-session cap. Another account's session is 404, as for
 * every session route.
 */
export class ContextsService {
  constructor(private readonly access: SessionAccess) {}

  async create(
    principal: Principal,
    sessionId: string,
    input: CreateContextInput,
  ): Promise<CodeContextRecord> {
    const env = checkEnv(input.env ?? {}, principal.limits);
    const workingDir = resolveWorkingDir(input.cwd);
    const { session, agent } = await this.access.open(principal, sessionId);
    const [created] = await agent.manageContexts({
      sessionId: session.id,
      action: 'create',
      language: input.language ?? 'typescript',
      workingDir,
      env,
    });
    if (created === undefined) throw new Error('The node answered a create with no context');
    return created;
  }

  async list(principal: Principal, sessionId: string): Promise<CodeContextRecord[]> {
    const { session, agent } = await this.access.open(principal, sessionId);
    return agent.manageContexts({ sessionId: session.id, action: 'list' });
  }

  async delete(principal: Principal, sessionId: string, contextId: string): Promise<void> {
    const id = checkContextId(contextId);
    const { session, agent } = await this.access.open(principal, sessionId);
    await agent.manageContexts({ sessionId: session.id, action: 'delete', contextId: id });
  }

  async restart(
    principal: Principal,
    sessionId: string,
    contextId: string,
  ): Promise<CodeContextRecord> {
    const id = checkContextId(contextId);
    const { session, agent } = await this.access.open(principal, sessionId);
    const [restarted] = await agent.manageContexts({
      sessionId: session.id,
      action: 'restart',
      contextId: id,
    });
    if (restarted === undefined) throw new Error('The node answered a restart with no context');
    return restarted;
  }
}
