import type { AgentHandlers, ContextsRequest__Output } from '@sandbox/proto';
import { CONTEXT_LANGUAGES, type ContextLanguage } from '@sandbox/contract';
import { AppError } from '@sandbox/errors';
import type { ContextAction, SandboxRuntime } from '../runtime/sandbox-runtime';
import { unary, type CallContext } from './call-handlers';

const LANGUAGES: ReadonlySet<string> = new Set(CONTEXT_LANGUAGES);

/** What a ContextsRequest asks for; invalid_request for an unknown action or language. */
export function contextAction(request: ContextsRequest__Output): ContextAction {
  switch (request.action) {
    case 'create': {
      const language = request.language || 'typescript';
      if (!LANGUAGES.has(language)) {
        throw new AppError('invalid_request', `Unknown language "${language}"`);
      }
      return {
        action: 'create',
        language: language as ContextLanguage,
        cwd: request.workingDir || '/workspace',
        env: request.env,
      };
    }
    case 'list':
      return { action: 'list' };
    case 'delete':
    case 'restart':
      if (request.contextId === '') throw new AppError('invalid_request', 'contextId is missing');
      return { action: request.action, contextId: request.contextId };
    default:
      throw new AppError('invalid_request', `Unknown context action "${request.action}"`);
  }
}

/** ManageContexts: the session's code contexts (ADR 42), through its runner. */
export function contextHandlers(
  context: CallContext,
  runtime: SandboxRuntime,
): Pick<AgentHandlers, 'ManageContexts'> {
  return {
    ManageContexts: unary(context, 'ManageContexts', async (request) => ({
      contexts: (await runtime.manageContexts(request.sessionId, contextAction(request))).map(
        (info) => ({
          contextId: info.contextId,
          language: info.language,
          workingDir: info.cwd,
          createdAt: info.createdAt,
        }),
      ),
    })),
  };
}
