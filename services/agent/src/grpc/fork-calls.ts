import type { AgentHandlers } from '@sandbox/proto';
import { AppError } from '@sandbox/errors';
import type { SandboxRuntime } from '../runtime/sandbox-runtime';
import { unary, type CallContext } from './call-handlers';
import { sandboxSpec, toSandbox } from './sandbox-messages';

/** Forks a call may ask for at once (the API's `count` is at most 10). */
const MAX_FORKS = 10;

/** ForkSandbox: forks of a running or idle session (ADR 43). */
export function forkHandlers(
  context: CallContext,
  runtime: SandboxRuntime,
): Pick<AgentHandlers, 'ForkSandbox'> {
  return {
    ForkSandbox: unary(context, 'ForkSandbox', async (request, call) => {
      const specs = request.forks.map(sandboxSpec);
      if (!request.sourceSessionId || specs.length === 0 || specs.length > MAX_FORKS) {
        throw new AppError('invalid_request', `sourceSessionId and 1 to ${MAX_FORKS} forks`);
      }
      if (runtime.fork === undefined) {
        throw new AppError('service_unavailable', 'This node cannot fork sessions');
      }
      const forked = await runtime.fork(request.sourceSessionId, specs);
      if (call.cancelled) {
        // The caller gave up (its deadline passed) and has ended the forks' sessions.
        context.logger.warn({ sessionId: request.sourceSessionId }, 'fork cancelled; removing');
        for (const spec of specs) await runtime.destroy(spec.sessionId);
        throw new AppError('request_timeout', 'The caller cancelled the fork');
      }
      return {
        sandboxes: forked.sandboxes.map(toSandbox),
        processesKept: forked.processesKept,
      };
    }),
  };
}
