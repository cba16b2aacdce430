import type * as grpc from '@grpc/grpc-js';
import { WORKSPACE } from '@sandbox/contract';
import { AppError } from '@sandbox/errors';
import type { TerminalInput__Output, TerminalOutput } from '@sandbox/proto';
import type { ByteSink, SandboxRuntime, TerminalHandle } from '../runtime/sandbox-runtime';
import { checkInternalToken } from './auth';
import { fail, type CallContext } from './call-handlers';

/** The terminal's size when the start names none (a classic terminal's). */
const DEFAULT_SIZE = { cols: 80, rows: 24 };

type TerminalCall = grpc.ServerDuplexStream<TerminalInput__Output, TerminalOutput>;

/**
 * OpenTerminal: the first message starts the program on a terminal of the sandbox; later
 * ones are typed bytes (the next is read only once the terminal took them, so a program that
 * does not read holds the typist back) and resizes. Its screen flows at the client's pace.
 * The client ending or cancelling the call hangs the program up.
 */
export function openTerminal(
  context: CallContext,
  runtime: SandboxRuntime,
): grpc.handleBidiStreamingCall<TerminalInput__Output, TerminalOutput> {
  return (call: TerminalCall) => {
    const abort = new AbortController();
    call.on('cancelled', () => abort.abort());
    const failed = (err: unknown): void => {
      abort.abort();
      if (!call.cancelled) call.emit('error', fail(context, 'OpenTerminal', err));
    };
    const drainWaiters: (() => void)[] = [];
    // The program's first output can come before its start is told: it is held until then,
    // so that `started` (with the pid) is always the first message.
    let beforeStart: Buffer[] | undefined = [];
    const sink: ByteSink = {
      write: (_stream, data) => {
        if (call.cancelled) return true;
        if (beforeStart !== undefined) {
          beforeStart.push(data);
          return true;
        }
        return call.write({ data });
      },
      onDrain: (resume) => {
        drainWaiters.push(resume);
        if (drainWaiters.length === 1) {
          call.once('drain', () => drainWaiters.splice(0).forEach((waiter) => waiter()));
        }
      },
      started: () => undefined,
    };
    let terminal: Promise<TerminalHandle> | undefined;
    call.on('data', (message: TerminalInput__Output) => {
      if (terminal === undefined) {
        terminal = start(context, runtime, call, message, sink, abort.signal);
        terminal.then((handle) => {
          if (call.cancelled) return;
          call.write({ started: { pid: handle.pid } });
          for (const data of beforeStart ?? []) call.write({ data });
          beforeStart = undefined;
          watchExit(context, call, handle);
        }, failed);
        return;
      }
      // One input at a time: the next message waits until the terminal took this one.
      call.pause();
      terminal
        .then((handle) => {
          if (message.input === 'data' && message.data !== undefined) {
            return handle.write(message.data);
          }
          if (message.input === 'resize' && message.resize != null) {
            return handle.resize(message.resize.cols, message.resize.rows);
          }
          return undefined;
        })
        .then(() => call.resume(), failed);
    });
    // The client is done (it closed the terminal): hang the program up.
    call.on('end', () => abort.abort());
    call.on('error', () => abort.abort());
  };
}

async function start(
  context: CallContext,
  runtime: SandboxRuntime,
  call: TerminalCall,
  message: TerminalInput__Output,
  sink: ByteSink,
  signal: AbortSignal,
): Promise<TerminalHandle> {
  checkInternalToken(call.metadata, context.internalToken);
  const spec = message.start;
  if (message.input !== 'start' || spec == null || spec.argv.length === 0) {
    throw new AppError('invalid_request', 'A terminal starts with its program (argv)');
  }
  const handle = await runtime.terminal(
    {
      sessionId: spec.sessionId,
      argv: spec.argv,
      env: spec.env,
      workingDir: spec.workingDir || WORKSPACE,
      cols: spec.cols || DEFAULT_SIZE.cols,
      rows: spec.rows || DEFAULT_SIZE.rows,
    },
    sink,
    signal,
  );
  return handle;
}

/** Tells the client the program's exit, then ends the call (after everything it wrote). */
function watchExit(context: CallContext, call: TerminalCall, handle: TerminalHandle): void {
  handle.exited.then(
    (exitCode) => {
      if (call.cancelled) return;
      call.write({ exited: { exitCode } });
      call.end();
    },
    (err: unknown) => {
      if (!call.cancelled) call.emit('error', fail(context, 'OpenTerminal', err));
    },
  );
}
