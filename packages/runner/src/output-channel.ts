import type { Readable, Writable } from 'node:stream';
import { asDiskFull } from './files';
import { RunnerError, type RunnerEvent } from './protocol';
import { asPathError } from './workspace-path';

/** A request whose output the agent can hold and resume, or stop. */
export interface Flow {
  pause(): void;
  resume(): void;
  cancel(): void;
}

/**
 * The runner's side of the protocol's output: one JSON event per line, with the stream's
 * backpressure handed on to whoever produces the events.
 */
export class OutputChannel {
  private readonly drainWaiters: (() => void)[] = [];
  /** Events wait for the end of this turn of the event loop (see `emit`). */
  private corked = false;

  constructor(private readonly output: Writable) {
    output.on('drain', () => this.drainWaiters.splice(0).forEach((resume) => resume()));
  }

  /**
   * Sends one event; `false` means the output is full: wait for `onDrain` before more. The
   * events of one turn of the event loop go in one write (a run's output, result and end
   * often come together): each write wakes the agent (and, over an exec stream rather than
   * the agent's socket, the container's shim and dockerd first).
   */
  emit(event: RunnerEvent): boolean {
    if (!this.corked) {
      this.corked = true;
      this.output.cork();
      setImmediate(() => this.flush());
    }
    return this.output.write(`${JSON.stringify(event)}\n`);
  }

  /** Sends what this turn's events hold now (the runner is about to exit). */
  flush(): void {
    if (!this.corked) return;
    this.corked = false;
    this.output.uncork();
  }

  /** Calls `resume` once, when the output has room again. */
  onDrain(resume: () => void): void {
    this.drainWaiters.push(resume);
  }

  /** Ends request `id` with an error event: a RunnerError as it is, anything else internal. */
  async fail(id: number, cause: unknown): Promise<void> {
    const err = asPathError(await asDiskFull(cause).catch(() => cause));
    if (err instanceof RunnerError) {
      this.emit({
        id,
        ev: 'error',
        code: err.code,
        message: err.message,
        ...(err.details ? { details: err.details } : {}),
      });
    } else {
      const message = err instanceof Error ? err.message : String(err);
      this.emit({ id, ev: 'error', code: 'internal_error', message });
    }
  }

  /**
   * Sends `stream` as `chunk` events, pausing it while the runner's output is full or the
   * agent holds this request, and stopping it when the agent cancels the request (its flow
   * is in `flows` meanwhile). Resolves with the number of bytes sent.
   */
  async sendWithFlowControl(
    id: number,
    stream: Readable,
    flows: Map<number, Flow>,
  ): Promise<number> {
    let sent = 0;
    let held = false;
    let full = false;
    const apply = (): void => {
      if (held || full) stream.pause();
      else stream.resume();
    };
    const hold = (value: boolean): void => {
      held = value;
      apply();
    };
    flows.set(id, {
      pause: () => hold(true),
      resume: () => hold(false),
      cancel: () => stream.destroy(new RunnerError('request_timeout', 'The read was cancelled')),
    });
    try {
      await new Promise<void>((resolve, reject) => {
        stream.on('data', (chunk: Buffer) => {
          sent += chunk.length;
          if (this.emit({ id, ev: 'chunk', data: chunk.toString('base64') }) || full) return;
          full = true;
          apply();
          this.onDrain(() => {
            full = false;
            apply();
          });
        });
        stream.on('end', resolve);
        stream.on('error', reject);
      });
    } finally {
      flows.delete(id);
    }
    return sent;
  }
}
