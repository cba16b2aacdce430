import { Readable } from 'node:stream';
import type * as grpc from '@grpc/grpc-js';
import { AppError, fromGrpcError } from '@sandbox/errors';
import {
  FILE_CHANGE_TYPES,
  type FileChange,
  type FileChangeType,
  type WatchEndReason,
  type WatchEvent,
} from '@sandbox/contract';
import type {
  ExecEvent__Output,
  FileChunk__Output,
  FileWatchEvent__Output,
  OutputEvent__Output,
} from '@sandbox/proto';
import { toExecEvent, toOutputEvent, type ExecEvent, type OutputEvent } from './agent-messages';

// The agent's server streams as the gateway takes them: a run's events and a run's kept output,
// each with flow control up to the process, and a file as a Readable at its reader's pace.

/** Pauses and resumes the flow of a run's events (backpressure up to the process). */
export interface FlowControl {
  pause(): void;
  resume(): void;
}

/** Receives a running execution's events. */
export interface ExecHandlers {
  onEvent(event: ExecEvent, flow: FlowControl): void;
}

/**
 * Opens a server stream and passes each message, as `toEvent` reads it, to `onEvent` (whose
 * `flow` holds the stream at the consumer's pace). Resolves when the stream ends, or as soon as
 * `isLast` says an event is the stream's last (the call's status, a turn of the server's loop
 * later, is then not waited for: a failure after it changes nothing taken). `signal` cancels
 * the stream until then, and the promise then rejects with 408 and `cancelled` as its message.
 */
function follow<Message, Event>(
  open: () => grpc.ClientReadableStream<Message>,
  toEvent: (message: Message) => Event | undefined,
  onEvent: (event: Event, flow: FlowControl) => void,
  signal: AbortSignal,
  { cancelled, isLast }: { cancelled: string; isLast?: (event: Event) => boolean },
): Promise<void> {
  return new Promise((resolve, reject) => {
    // A caller gone before the call opened (while a session woke) opens none: a call that
    // grpc-js cancels as it opens may still reach the node, and never its cancel.
    if (signal.aborted) {
      reject(new AppError('request_timeout', cancelled));
      return;
    }
    const call = open();
    const cancel = (): void => call.cancel();
    signal.addEventListener('abort', cancel, { once: true });
    const settle = (failure?: Error): void => {
      signal.removeEventListener('abort', cancel);
      if (failure === undefined) resolve();
      else reject(failure);
    };
    const flow: FlowControl = { pause: () => call.pause(), resume: () => call.resume() };
    /** The last event was taken: anything after it (none is sent) goes nowhere. */
    let over = false;
    call.on('data', (message: Message) => {
      const event = over ? undefined : toEvent(message);
      if (event === undefined) return;
      onEvent(event, flow);
      over = isLast?.(event) === true;
      if (over) settle();
    });
    // Kept after the last event too: a failure of the call then (its connection lost before
    // the status) is moot, and an 'error' without a listener would throw.
    call.on('error', (err) => {
      settle(signal.aborted ? new AppError('request_timeout', cancelled) : fromGrpcError(err));
    });
    call.on('end', () => settle());
  });
}

/**
 * Opens an execution's stream and passes each event to `handlers` as it arrives. Resolves with
 * the run's result (the agent's last message, sent just before the call's status) or when the
 * stream ends; `signal` cancels the run until then.
 */
export function followExec(
  open: () => grpc.ClientReadableStream<ExecEvent__Output>,
  handlers: ExecHandlers,
  signal: AbortSignal,
): Promise<void> {
  return follow(open, toExecEvent, (event, flow) => handlers.onEvent(event, flow), signal, {
    cancelled: 'Run cancelled',
    isLast: (event) => event.kind === 'result',
  });
}

/**
 * Opens a read of a run's kept output and passes each event to `onEvent` (whose `flow` holds
 * the read at the reader's pace). Resolves when the stream ends; `signal` ends it.
 */
export function followOutput(
  open: () => grpc.ClientReadableStream<OutputEvent__Output>,
  onEvent: (event: OutputEvent, flow: FlowControl) => void,
  signal: AbortSignal,
): Promise<void> {
  return follow(open, toOutputEvent, onEvent, signal, { cancelled: 'Read cancelled' });
}

/**
 * A file's read under way: resolves with its size once the node has it open (a refusal before
 * that rejects; no answer within `openTimeoutMs` is 408), and its bytes as a stream that
 * follows the reader's pace. Destroying the stream cancels the read.
 */
export function openedFile(
  call: grpc.ClientReadableStream<FileChunk__Output>,
  openTimeoutMs: number,
): Promise<{ size: number; body: Readable }> {
  let openTimedOut = false;
  const openTimer = setTimeout(() => {
    openTimedOut = true;
    call.cancel();
  }, openTimeoutMs);
  return new Promise((resolve, reject) => {
    let body: Readable | undefined;
    call.on('data', (chunk: FileChunk__Output) => {
      if (body === undefined) {
        clearTimeout(openTimer);
        body = new Readable({
          read: () => call.resume(),
          destroy: (err, done) => {
            call.cancel(); // a no-op once the call has ended
            done(err);
          },
        });
        resolve({ size: chunk.size, body });
      } else if (!body.push(chunk.data)) {
        call.pause();
      }
    });
    call.on('end', () => {
      if (body === undefined) reject(new AppError('internal_error', 'The node sent no file'));
      else body.push(null);
    });
    call.on('error', (err: grpc.ServiceError) => {
      clearTimeout(openTimer);
      const failure = openTimedOut
        ? new AppError('request_timeout', 'The file could not be opened in time', { cause: err })
        : fromGrpcError(err);
      if (body === undefined) reject(failure);
      else body.destroy(failure);
    });
  });
}

/** A watch's events as the gateway takes them (ADR 60); `ended` is the last. */
export type WatchStreamEvent = WatchEvent | { kind: 'ended'; reason: WatchEndReason };

const WATCH_END_REASONS: readonly WatchEndReason[] = ['cancelled', 'removed', 'stopped'];

function toWatchEvent(message: FileWatchEvent__Output): WatchStreamEvent | undefined {
  switch (message.kind) {
    case 'watching':
      return { kind: 'watching', directories: message.directories };
    case 'changes':
      return {
        kind: 'changes',
        changes: message.changes.flatMap((change): FileChange[] => {
          if (!FILE_CHANGE_TYPES.includes(change.type as FileChangeType)) return [];
          const { path, oldPath, isDirectory } = change;
          const type = change.type as FileChangeType;
          return [
            oldPath === '' ? { type, path, isDirectory } : { type, path, oldPath, isDirectory },
          ];
        }),
      };
    case 'overflow':
      return { kind: 'overflow' };
    case 'ended': {
      const reason = WATCH_END_REASONS.find((known) => known === message.reason) ?? 'stopped';
      return { kind: 'ended', reason };
    }
    default:
      return undefined;
  }
}

/**
 * Opens a watch and passes each event to `onEvent` as it comes (its `flow` holds the call:
 * the node then drops changes and says `overflow`), until its `ended` (resolves with the
 * reason). `signal` cancels it (rejects with 408 `Watch cancelled`).
 */
export async function followWatch(
  open: () => grpc.ClientReadableStream<FileWatchEvent__Output>,
  onEvent: (event: WatchEvent, flow: FlowControl) => void,
  signal: AbortSignal,
): Promise<WatchEndReason> {
  let reason: WatchEndReason = 'stopped';
  await follow(
    open,
    toWatchEvent,
    (event, flow) => {
      if (event.kind === 'ended') reason = event.reason;
      else onEvent(event, flow);
    },
    signal,
    { cancelled: 'Watch cancelled', isLast: (event) => event.kind === 'ended' },
  );
  return reason;
}
