import type * as grpc from '@grpc/grpc-js';
import { fromGrpcError, type AppError } from '@sandbox/errors';
import type { TerminalInput, TerminalOutput__Output } from '@sandbox/proto';
import type { TerminalSpec } from './agent-messages';

/** A terminal to start: what it runs, where, on a screen of what size, in which session. */
export type TerminalStartSpec = TerminalSpec & { sessionId: string };

/** Receives a terminal's events. */
export interface TerminalHandlers {
  started(pid: number): void;
  data(bytes: Buffer): void;
  exited(exitCode: number): void;
  /** The call failed (the node refused it or went away). */
  failed(err: AppError): void;
  /** The node ended the call (after `exited`). */
  ended(): void;
}

/** A terminal under way. */
export interface TerminalConnection {
  /** Typed bytes; false: wait for `onceDrained` before more. */
  write(data: Buffer): boolean;
  resize(cols: number, rows: number): void;
  onceDrained(resume: () => void): void;
  /** Holds the screen's bytes (back up to the program) / lets them flow. */
  pause(): void;
  resume(): void;
  /** Hangs the program up. */
  end(): void;
}

/**
 * Starts a terminal on an open `OpenTerminal` call: its start, screen, exit and failure go to
 * `handlers`; the connection takes typed bytes and resizes, holds the screen while paused, and
 * hangs the program up when ended.
 */
export function startTerminal(
  call: grpc.ClientDuplexStream<TerminalInput, TerminalOutput__Output>,
  start: TerminalStartSpec,
  handlers: TerminalHandlers,
): TerminalConnection {
  call.write({ start });
  call.on('data', (message: TerminalOutput__Output) => {
    if (message.started) handlers.started(message.started.pid);
    if (message.data) handlers.data(message.data);
    if (message.exited) handlers.exited(message.exited.exitCode);
  });
  call.on('end', () => handlers.ended());
  call.on('error', (err) => handlers.failed(fromGrpcError(err)));
  return {
    write: (data) => call.write({ data }),
    resize: (cols, rows) => call.write({ resize: { cols, rows } }),
    onceDrained: (resume) => call.once('drain', resume),
    pause: () => call.pause(),
    resume: () => call.resume(),
    end: () => call.end(),
  };
}
