import * as grpc from '@grpc/grpc-js';
import { toAppError, toGrpcStatus } from '@sandbox/errors';
import type { Logger } from '@sandbox/logger';
import type { ByteSink, OutputMark, ProcessRef } from '../runtime/sandbox-runtime';
import { checkInternalToken } from './auth';

/** What every call of the agent needs: where failures are logged, and the token it checks. */
export interface CallContext {
  logger: Logger;
  internalToken: string | undefined;
}

/** The gRPC status of a failure; only unexpected ones are logged (their cause never leaves). */
export function fail(
  context: CallContext,
  method: string,
  err: unknown,
): Partial<grpc.StatusObject> {
  const appError = toAppError(err);
  if (appError.code === 'internal_error')
    context.logger.error({ err, method }, 'agent call failed');
  return toGrpcStatus(appError);
}

export function unary<Req, Res>(
  context: CallContext,
  method: string,
  handle: (request: Req, call: grpc.ServerUnaryCall<Req, Res>) => Promise<Res>,
): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => {
    Promise.resolve()
      .then(() => checkInternalToken(call.metadata, context.internalToken))
      .then(() => handle(call.request, call))
      .then(
        (response) => callback(null, response),
        (err: unknown) => callback(fail(context, method, err)),
      )
      .catch((err: unknown) => {
        // Sending the answer itself failed: never let that end the agent.
        context.logger.error({ err, method }, 'could not answer a call');
        callback({ code: grpc.status.INTERNAL, details: 'Internal error' });
      });
  };
}

/**
 * A server-streaming call: `work` writes messages through a byte sink that honours the
 * client's flow control, and may return one last message. A cancelled call aborts `signal`.
 * `started.message` tells the client the work began; with `started.unlessOutputWithinMs`,
 * only when no output (which tells it as well) follows that soon. grpc-js leaves Nagle's
 * algorithm on for server connections, so two small messages in a row would make the second
 * wait for the client's delayed ACK (~40 ms): a run that prints at once sends one.
 */
export function streaming<Req, Res>(
  context: CallContext,
  method: string,
  toMessage: (stream: 'stdout' | 'stderr', chunk: Buffer, mark?: OutputMark) => Res,
  work: (request: Req, sink: ByteSink, signal: AbortSignal) => Promise<Res | undefined>,
  started?: {
    message: (size?: number, process?: ProcessRef) => Res;
    unlessOutputWithinMs?: (request: Req) => number | undefined;
  },
): grpc.handleServerStreamingCall<Req, Res> {
  return (call) => {
    const abort = new AbortController();
    // One 'drain' listener however many writes met a full buffer before it drained.
    const drainWaiters: (() => void)[] = [];
    const releaseWaiters = (): void => drainWaiters.splice(0).forEach((waiter) => waiter());
    /** The work ended: a `cancelled` now (grpc-js says it after every call's status) aborts nothing. */
    let ended = false;
    const cancelled = (): void => {
      if (ended) return;
      abort.abort(); // an AbortError made for nothing after each call cost ~3% of the agent's CPU
      releaseWaiters(); // nothing waits on a client that is gone
    };
    call.on('cancelled', cancelled);
    if (call.cancelled) cancelled(); // gone before this handler ran: no event comes then
    let announcedStart = false;
    /** A run's process, once known: said again when it starts after an earlier `started`. */
    let announcedProcess = false;
    let startTimer: NodeJS.Timeout | undefined;
    const announceStart = (size?: number, process?: ProcessRef): void => {
      clearTimeout(startTimer);
      const news = !announcedStart || (process !== undefined && !announcedProcess);
      if (started === undefined || !news || call.cancelled) return;
      announcedStart = true;
      announcedProcess = process !== undefined;
      call.write(started.message(size, process));
    };
    const sink: ByteSink = {
      write: (stream, chunk, mark) => {
        clearTimeout(startTimer);
        announcedStart = true; // output says it
        if (mark !== undefined) announcedProcess = true;
        return call.cancelled ? true : call.write(toMessage(stream, chunk, mark));
      },
      onDrain: (resume) => {
        if (call.cancelled) {
          resume();
          return;
        }
        drainWaiters.push(resume);
        if (drainWaiters.length === 1) call.once('drain', releaseWaiters);
      },
      started: (size, process) => {
        const waitMs = started?.unlessOutputWithinMs?.(call.request);
        if (waitMs === undefined) announceStart(size, process);
        else {
          clearTimeout(startTimer);
          startTimer = setTimeout(() => announceStart(size, process), waitMs);
        }
      },
    };
    Promise.resolve()
      .then(async () => {
        checkInternalToken(call.metadata, context.internalToken);
        const last = await work(call.request, sink, abort.signal).finally(() => {
          ended = true;
          clearTimeout(startTimer);
        });
        if (call.cancelled) return;
        if (last !== undefined) call.write(last);
        call.end();
      })
      .catch((err: unknown) => {
        if (!call.cancelled) call.emit('error', fail(context, method, err));
      })
      .catch((err: unknown) => {
        context.logger.error({ err, method }, 'could not answer a call');
        call.destroy();
      });
  };
}
