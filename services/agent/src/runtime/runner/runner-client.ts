import type { Duplex } from 'node:stream';
import { AppError, isErrorCode } from '@sandbox/errors';
import type { Logger } from '@sandbox/logger';
import {
  FINAL_EVENTS,
  type RunnerEvent,
  type RunnerRequest,
  type StreamEventName,
} from '@sandbox/runner';
import { DockerFrameParser, LineSplitter } from './docker-stream';
import type { RunnerStream } from './runner-link';

/** Starts a fresh runner process in the sandbox (a `docker exec`): where it speaks. */
export type RunnerLauncher = () => Promise<RunnerStream>;

type Request = RunnerRequest extends infer R
  ? R extends { id: number }
    ? Omit<R, 'id'>
    : never
  : never;
type FinalEvent = Exclude<RunnerEvent, { ev: StreamEventName }>;
type StreamEvent = Extract<RunnerEvent, { ev: StreamEventName }>;

/**
 * Receives a request's streamed events; returning false asks the runner to hold that
 * request's output until `resume` is called (backpressure up to the process's pipe, for that
 * run only).
 */
export type EventHandler = (event: StreamEvent, resume: () => void) => boolean | void;

interface Pending {
  onEvent(event: StreamEvent): boolean | void;
  resolve(event: FinalEvent): void;
  reject(err: AppError): void;
}

class Connection {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  /** Requests whose consumer asked the runner to hold their output. */
  private readonly held = new Set<number>();
  closed = false;

  private readonly stream: Duplex;

  constructor(
    { stream, framed }: RunnerStream,
    private readonly logger: Logger,
    private readonly onClose: () => void,
  ) {
    this.stream = stream;
    const lines = new LineSplitter(
      (line) => this.onLine(line),
      () => this.close(new Error('the runner sent an over-long line')),
    );
    if (framed) {
      const parser = new DockerFrameParser(
        (payload) => lines.push(payload),
        (payload) =>
          logger.warn({ runner: payload.toString('utf8').slice(0, 2000) }, 'runner stderr'),
      );
      stream.on('data', (chunk: Buffer) => parser.push(chunk));
    } else {
      stream.on('data', (chunk: Buffer) => lines.push(chunk));
    }
    // A linked runner's socket is held paused until here.
    stream.resume();
    stream.on('error', (err) => this.close(err));
    stream.on('close', () => this.close());
    stream.on('end', () => this.close());
  }

  private onLine(line: string): void {
    let event: RunnerEvent;
    try {
      event = JSON.parse(line) as RunnerEvent;
    } catch {
      this.logger.warn('runner sent a line that is not JSON');
      return;
    }
    const pending = this.pending.get(event.id);
    if (pending === undefined) return;
    if (!FINAL_EVENTS.has(event.ev)) {
      let held: boolean | void;
      try {
        held = pending.onEvent(event as StreamEvent);
      } catch (err) {
        // A consumer's fault is its request's, never the connection's (nor the agent's).
        this.logger.error({ err }, 'a runner event handler failed');
        return;
      }
      if (held === false) this.hold(event.id);
      return;
    }
    this.pending.delete(event.id);
    this.held.delete(event.id);
    if (event.ev === 'error') {
      pending.reject(
        new AppError(isErrorCode(event.code) ? event.code : 'internal_error', event.message, {
          ...(event.details ? { details: event.details } : {}),
        }),
      );
    } else {
      pending.resolve(event as FinalEvent);
    }
  }

  /**
   * Asks the runner to stop reading one run's output (its process then blocks), leaving the
   * connection free for every other request of the sandbox.
   */
  private hold(id: number): void {
    if (this.held.has(id)) return;
    this.held.add(id);
    this.send({ op: 'pause', target: id }, () => undefined).result.catch(() => undefined);
  }

  /** The consumer of request `id` can take more output again. */
  release(id: number): void {
    if (!this.held.delete(id)) return;
    this.send({ op: 'resume', target: id }, () => undefined).result.catch(() => undefined);
  }

  send(request: Request, onEvent: Pending['onEvent']): { id: number; result: Promise<FinalEvent> } {
    const id = this.nextId;
    this.nextId += 1;
    const result = new Promise<FinalEvent>((resolve, reject) => {
      if (this.closed) {
        reject(
          new AppError('service_unavailable', 'The sandbox runner is not available', {
            retryAfter: 1,
          }),
        );
        return;
      }
      this.pending.set(id, { onEvent, resolve, reject });
      this.stream.write(`${JSON.stringify({ ...request, id })}\n`);
    });
    return { id, result };
  }

  /** Ends the connection: each request under way fails with `reason` (default: runner lost). */
  close(err?: unknown, reason?: AppError): void {
    if (this.closed) return;
    this.closed = true;
    if (err !== undefined) this.logger.warn({ err }, 'runner connection failed');
    const lost =
      reason ??
      new AppError('service_unavailable', 'The sandbox runner stopped; retry', {
        retryAfter: 1,
      });
    for (const pending of this.pending.values()) pending.reject(lost);
    this.pending.clear();
    this.stream.destroy();
    this.onClose();
  }
}

/**
 * The agent's side of one sandbox's runner: starts it on first use, restarts it after it died
 * (a user may kill it), and matches responses to requests.
 */
export class RunnerClient {
  private connection: Promise<Connection> | undefined;

  constructor(
    private readonly launch: RunnerLauncher,
    private readonly logger: Logger,
  ) {}

  private connect(): Promise<Connection> {
    this.connection ??= this.launch().then(
      (stream) =>
        new Connection(stream, this.logger, () => {
          this.connection = undefined;
        }),
      (err: unknown) => {
        this.connection = undefined;
        throw err;
      },
    );
    return this.connection;
  }

  /**
   * Sends one request; streamed events go to `onEvent` (which may hold the request's output,
   * and later call the `resume` it was given), the final event resolves the promise (the
   * runner's errors reject it as AppErrors). An aborted `signal` cancels the request in the
   * runner; `onSent` learns the request's id (later requests about it name it).
   */
  async request<E extends FinalEvent['ev']>(
    request: Request,
    expected: E,
    {
      onEvent,
      signal,
      onSent,
    }: { onEvent?: EventHandler; signal?: AbortSignal; onSent?: (id: number) => void } = {},
  ): Promise<Extract<FinalEvent, { ev: E }>> {
    const connection = await this.connect();
    const resume = (): void => connection.release(id);
    const { id, result } = connection.send(request, (event) => onEvent?.(event, resume));
    onSent?.(id);
    const cancel = (): void => {
      connection.send({ op: 'cancel', target: id }, () => undefined).result.catch(() => undefined);
    };
    if (signal?.aborted === true) cancel();
    else signal?.addEventListener('abort', cancel, { once: true });
    let event: FinalEvent;
    try {
      event = await result;
    } finally {
      signal?.removeEventListener('abort', cancel);
    }
    if (event.ev !== expected) {
      throw new AppError('internal_error', `Runner answered ${event.ev} to ${request.op}`);
    }
    return event as Extract<FinalEvent, { ev: E }>;
  }

  /** Ends the connection; the runs under way fail with `reason` (default: runner lost). */
  close(reason?: AppError): void {
    void this.connection?.then((c) => c.close(undefined, reason)).catch(() => undefined);
    this.connection = undefined;
  }
}
