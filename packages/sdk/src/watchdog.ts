import { AbortedError, ClientTimeoutError, NetworkError, SandboxError } from './errors.js';

/**
 * One attempt of a request, aborted when the caller's signal aborts or when it goes quiet
 * for `ms` (0: never): no answer yet, no byte of a body being read, no chunk of a body being
 * sent. `kick()` restarts the count; `stop()` ends the watch.
 */
export class Watchdog {
  private readonly controller = new AbortController();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;
  /** The quiet time ran out. */
  fired = false;

  constructor(
    private ms: number,
    private readonly outer: AbortSignal | undefined,
    private readonly apiUrl: string,
  ) {
    if (outer?.aborted) this.controller.abort(outer.reason);
    else outer?.addEventListener('abort', this.onOuterAbort, { once: true });
    this.kick();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  kick(): void {
    clearTimeout(this.timer);
    if (this.stopped || this.ms <= 0) return;
    this.timer = setTimeout(() => {
      this.fired = true;
      this.controller.abort(this.timeoutError());
    }, this.ms);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.outer?.removeEventListener('abort', this.onOuterAbort);
  }

  /**
   * What a failure of this attempt is: the timeout, the caller's abort, or a connection that
   * failed (`cause`, the runtime's error).
   */
  failure(cause: unknown): SandboxError {
    if (cause instanceof SandboxError) return cause;
    if (this.fired) return this.timeoutError();
    if (this.outer?.aborted) return abortedError(this.outer.reason);
    const message = cause instanceof Error ? cause.message : String(cause);
    return new NetworkError({
      code: 'network_error',
      status: 0,
      message: `No answer from ${this.apiUrl}: ${message}`,
      cause,
    });
  }

  /**
   * `body`, read through this watch, which may now stay quiet `idleMs` at most: each chunk
   * restarts the count, and a failure is thrown as a SandboxError. The watch stops at its end.
   */
  watchBody(body: ReadableStream<Uint8Array>, idleMs: number): ReadableStream<Uint8Array> {
    this.ms = idleMs;
    this.kick();
    const reader = body.getReader();
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await reader.read();
        } catch (err) {
          this.stop();
          controller.error(this.failure(err));
          return;
        }
        if (chunk.done) {
          this.stop();
          controller.close();
          return;
        }
        this.kick();
        controller.enqueue(chunk.value);
      },
      cancel: async (reason) => {
        this.stop();
        await reader.cancel(reason).catch(() => undefined);
      },
    });
  }

  /** A body being sent, each chunk of it restarting the count (a long upload is no stall). */
  watchUpload(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
    const reader = body.getReader();
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        const chunk = await reader.read();
        this.kick();
        if (chunk.done) controller.close();
        else controller.enqueue(chunk.value);
      },
      cancel: (reason) => reader.cancel(reason),
    });
  }

  private readonly onOuterAbort = (): void => this.controller.abort(this.outer?.reason);

  private timeoutError(): ClientTimeoutError {
    return new ClientTimeoutError({
      code: 'client_timeout',
      status: 0,
      message: `${this.apiUrl} sent nothing for ${this.ms} ms (requestTimeoutMs)`,
      details: { timeoutMs: this.ms },
    });
  }
}

/** The caller's abort as an error; `reason`, the signal's, is its cause. */
export function abortedError(reason: unknown): AbortedError {
  if (reason instanceof AbortedError) return reason;
  return new AbortedError({
    code: 'aborted',
    status: 0,
    message: 'The call was aborted',
    cause: reason,
  });
}
