import type { ContextLanguage } from '@sandbox/contract';
import { AppError } from '@sandbox/errors';
import type { CodeContextInfo, ContextAction, RunSpec } from '../sandbox-runtime';
import type { RunnerClient } from './runner-client';
import { manageContexts } from './runner-requests';

interface Made {
  language: ContextLanguage;
  cwd: string;
  env: Record<string, string>;
}

function notFound(err: unknown): boolean {
  return err instanceof AppError && err.code === 'context_not_found';
}

/**
 * The code contexts (ADR 42) the node made for each session, and how: a context lives in its
 * sandbox's runner, and goes with it (a deep sleep, a runner restart). An id the runner no
 * longer knows but this node made is answered `context_lost` rather than `context_not_found`,
 * and a restart makes it again under the same id.
 */
export class KnownContexts {
  private readonly sessions = new Map<string, Map<string, Made>>();

  /** Does `action` through the session's runner, remembering what it made and deleted. */
  async manage(
    sessionId: string,
    action: ContextAction,
    runner: RunnerClient,
  ): Promise<CodeContextInfo[]> {
    const manage = (a: ContextAction) => manageContexts(runner, a);
    const known = this.sessions.get(sessionId);
    if (action.action === 'create') {
      const made = await manage(action);
      for (const info of made) this.remember(sessionId, info.contextId, action);
      return made;
    }
    if (action.action === 'list') return manage(action);
    try {
      const answer = await manage(action);
      if (action.action === 'delete') known?.delete(action.contextId);
      return answer;
    } catch (err) {
      const lost = known?.get(action.contextId);
      if (!notFound(err) || lost === undefined) throw err;
      if (action.action === 'delete') {
        known?.delete(action.contextId);
        return [];
      }
      return manage({ action: 'create', ...lost, contextId: action.contextId });
    }
  }

  /** Runs a cell (or a run): a context lost here fails with `context_lost`. */
  async cell<T>(spec: RunSpec, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      throw this.explain(err, spec.sessionId, spec.contextId);
    }
  }

  /** A cell's failure, as the caller should learn it: `context_lost` for a context lost here. */
  private explain(err: unknown, sessionId: string, contextId: string | undefined): unknown {
    if (!notFound(err) || contextId === undefined) return err;
    if (this.sessions.get(sessionId)?.has(contextId) !== true) return err;
    return new AppError(
      'context_lost',
      'The context was lost with its sandbox’s processes (a deep sleep or a restart): restart it for a fresh one under the same id',
      { details: { contextId } },
    );
  }

  forget(sessionId: string): void {
    this.sessions.delete(sessionId);
  }

  private remember(sessionId: string, contextId: string, made: Made): void {
    let known = this.sessions.get(sessionId);
    if (known === undefined) {
      known = new Map();
      this.sessions.set(sessionId, known);
    }
    known.set(contextId, { language: made.language, cwd: made.cwd, env: made.env });
  }
}
