import type * as grpc from '@grpc/grpc-js';
import type {
  AgentHandlers,
  OutputEvent,
  ProcessInfo,
  ReadOutputRequest__Output,
} from '@sandbox/proto';
import type { SandboxRuntime } from '../runtime/sandbox-runtime';
import type { ProcessSummary } from '../runtime/processes/process-summary';
import { fail, unary, type CallContext } from './call-handlers';
import { checkInternalToken } from './auth';

/** How long a stdin write may wait for its process at the most, whatever the caller asks. */
const MAX_STDIN_WAIT_MS = 60_000;

export function toProcessInfo({ meta, written, keptFrom }: ProcessSummary): ProcessInfo {
  return {
    id: meta.id,
    pid: meta.pid,
    kind: meta.kind,
    label: meta.label,
    state: meta.state,
    startedAt: meta.startedAt,
    exitedAt: meta.exitedAt ?? '',
    ...(meta.result === undefined ? {} : { result: meta.result }),
    failureCode: meta.failure?.code ?? '',
    failureMessage: meta.failure?.message ?? '',
    stdin: meta.stdin,
    stdinBytes: meta.stdinBytes,
    outputClosed: meta.outputClosed,
    written,
    keptFrom,
    logBytes: meta.capBytes,
  };
}

/**
 * ReadOutput: the process, its output from the asked position at the client's pace, then the
 * process again. A cancelled call ends the read.
 */
function readOutput(
  context: CallContext,
  runtime: SandboxRuntime,
): grpc.handleServerStreamingCall<ReadOutputRequest__Output, OutputEvent> {
  return (call) => {
    const abort = new AbortController();
    call.on('cancelled', () => abort.abort());
    /** Writes one message; resolves once the client can take more. */
    const send = (message: OutputEvent): Promise<void> =>
      call.cancelled || call.write(message)
        ? Promise.resolve()
        : new Promise((resolve) => {
            const go = (): void => {
              call.off('cancelled', go);
              call.off('drain', go);
              resolve();
            };
            call.once('drain', go);
            call.once('cancelled', go);
          });
    Promise.resolve()
      .then(async () => {
        checkInternalToken(call.metadata, context.internalToken);
        const { sessionId, process: ref, from, follow, untilExit } = call.request;
        const summary = runtime.process(sessionId, ref);
        await send({ process: toProcessInfo(summary) });
        const process = { id: summary.meta.id, pid: summary.meta.pid };
        const { summary: last } = await runtime.readOutput(
          sessionId,
          ref,
          { stdout: from?.stdout ?? 0, stderr: from?.stderr ?? 0 },
          (item) =>
            'gap' in item
              ? send({ gap: item.gap })
              : send({ [item.stream]: { data: item.data, at: item.at, process } }),
          { follow, untilExit, signal: abort.signal },
        );
        if (call.cancelled) return;
        call.write({ end: toProcessInfo(last) });
        call.end();
      })
      .catch((err: unknown) => {
        if (!call.cancelled) call.emit('error', fail(context, 'ReadOutput', err));
      })
      .catch((err: unknown) => {
        context.logger.error({ err }, 'could not answer ReadOutput');
        call.destroy();
      });
  };
}

/** The calls about a session's runs: their list, their output, their stdin. */
export function processHandlers(
  context: CallContext,
  runtime: SandboxRuntime,
): Pick<AgentHandlers, 'ListProcesses' | 'ReadOutput' | 'WriteStdin'> {
  return {
    ListProcesses: unary(context, 'ListProcesses', (request) =>
      Promise.resolve({ processes: runtime.listProcesses(request.sessionId).map(toProcessInfo) }),
    ),
    ReadOutput: readOutput(context, runtime),
    WriteStdin: unary(context, 'WriteStdin', (request) =>
      runtime.writeStdin(request.sessionId, request.process, {
        data: request.data,
        close: request.close,
        waitMs: Math.min(request.waitMs || MAX_STDIN_WAIT_MS, MAX_STDIN_WAIT_MS),
      }),
    ),
  };
}
