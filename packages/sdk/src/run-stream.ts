import type { EventSourceMessage } from 'eventsource-parser';
import {
  errorFromResponse,
  ExecutionTimeoutError,
  NetworkError,
  SandboxError,
  statusOf,
} from './errors.js';
import { retryDelayMs, type HttpClient, type RequestSpec } from './http.js';
import { resumingEvents } from './sse.js';
import type {
  CellError,
  CellResult,
  ExecuteBody,
  ExecutionEvent,
  ExecutionResult,
} from './types.js';
import { abortedError } from './watchdog.js';

/** How often a dropped run stream is resumed before the failure is thrown. */
const MAX_RESUMES = 5;

/** How long an aborted run gets to start (and name its pid, to be killed). */
const ABORT_WAIT_MS = 5_000;

/**
 * Where a run's events begin: a new run (`body`; its answer may take `timeoutMs`, the run's
 * own timeout included), or a run under way or ended, right after the event `resumeAt`.
 */
export type RunStart = { body: ExecuteBody; timeoutMs: number } | { resumeAt: string };

/** A run's process: its pid in the sandbox and its id (`proc_…`, never used again). */
export interface RunProcess {
  pid: number;
  id: string;
}

/**
 * One streamed run's connection(s): the first request, then, if the connection drops before
 * the run's last event, reconnects with `Last-Event-ID` (the last event's id, or the run's
 * process id from the headers when no event came yet). Leaving its events early only closes
 * the connection (the run goes on: it outlives its client); an abort kills the run.
 */
export class RunStream {
  private readonly controller = new AbortController();
  private pid: number | undefined;
  private processId: string | undefined;
  private requestId: string | undefined;
  private abortReason: unknown;
  private aborted = false;
  private killOnAbort = true;
  /** The first request is under way: its headers will name the run, to kill it. */
  private opening = false;

  constructor(
    private readonly http: HttpClient,
    private readonly sessionId: string,
  ) {}

  /** The run's process, once the headers or the `started` event named it. */
  get process(): RunProcess | undefined {
    return this.pid === undefined || this.processId === undefined
      ? undefined
      : { pid: this.pid, id: this.processId };
  }

  context(): { requestId?: string } {
    return this.requestId === undefined ? {} : { requestId: this.requestId };
  }

  /**
   * The caller gave up: the stream ends and, with `kill`, the run is killed. A run not yet
   * started gets ABORT_WAIT_MS to start, so that its pid is known and it can be killed.
   */
  abort(reason: unknown, kill = true): void {
    this.aborted = true;
    this.abortReason = reason;
    this.killOnAbort = kill;
    if (this.opening && kill) {
      setTimeout(() => this.controller.abort(reason), ABORT_WAIT_MS);
    } else this.controller.abort(reason);
  }

  /**
   * The run's events until its result (the last), or the error event it ended with, thrown.
   * Leaving early closes the connection, and kills the run only after an `abort` that says so.
   */
  async *events(start: RunStart): AsyncGenerator<ExecutionEvent, void, undefined> {
    let finished = false;
    try {
      for await (const message of this.messages(start)) {
        const event = this.toEvent(message);
        if (event === undefined) continue;
        if (event.type === 'started') {
          this.pid = event.pid;
          this.processId = event.processId;
        }
        finished = event.type === 'result';
        yield event;
        if (finished) return;
      }
    } finally {
      await this.close(this.aborted && this.killOnAbort && !finished);
    }
  }

  private async *messages(start: RunStart): AsyncGenerator<EventSourceMessage> {
    const ended = () =>
      new NetworkError({
        code: 'network_error',
        status: 0,
        message: 'The run stream ended before its result',
        ...this.context(),
      });
    try {
      yield* resumingEvents((lastEventId, resumes) => this.reopen(start, lastEventId, resumes), {
        maxResumes: MAX_RESUMES,
        aborted: () => this.aborted,
        exhausted: ended,
      });
    } catch (err) {
      throw this.aborted ? abortedError(this.abortReason) : err;
    }
    throw ended();
  }

  /**
   * The run's first request, or a reconnect after the last event received (the process id
   * from the headers when no event came yet); undefined when there is nothing to resume.
   */
  private async reopen(
    start: RunStart,
    lastEventId: string | undefined,
    resumes: number,
  ): Promise<Response | undefined> {
    if (resumes === 0 && 'body' in start) {
      return this.open({ json: start.body, retry: 'refused', timeoutMs: start.timeoutMs });
    }
    if (this.aborted) throw abortedError(this.abortReason);
    const resumeAt =
      lastEventId ??
      ('resumeAt' in start ? start.resumeAt : undefined) ??
      (this.processId === undefined ? undefined : `${this.processId}:0:0`);
    if (resumeAt === undefined || !/^proc_/.test(resumeAt)) return undefined;
    if (resumes > 0) await sleepFor(retryDelayMs(resumes - 1));
    const response = await this.open({
      json: { sessionId: this.sessionId, stream: true },
      headers: { 'last-event-id': resumeAt },
      retry: 'safe',
    });
    return response.status === 204 ? undefined : response; // 204: its result was sent
  }

  /** An event of the stream as the SDK gives it; an `error` event is thrown. */
  private toEvent(message: EventSourceMessage): ExecutionEvent | undefined {
    const data = eventData(message);
    switch (message.event) {
      case 'started':
        return { type: 'started', pid: data.pid as number, processId: data.processId as string };
      case 'stdout':
      case 'stderr':
        return { type: message.event, data: data.data as string };
      case 'cell_result':
        return { type: 'cell_result', result: data.result as CellResult };
      case 'cell_error':
        return { type: 'cell_error', error: data.error as CellError };
      case 'exit':
        return { type: 'exit', code: data.code as number };
      case 'result':
        return { type: 'result', result: data as unknown as ExecutionResult };
      case 'error':
        throw errorFromResponse(statusOf(data.code), { error: data }, this.context());
      default:
        return undefined; // an event a newer service added
    }
  }

  /** Ends the stream; `kill`: the run is killed on the service if it still runs. */
  private async close(kill: boolean): Promise<void> {
    this.controller.abort();
    if (!kill || this.pid === undefined) return;
    await this.http
      .send({
        method: 'POST',
        path: '/execution/kill',
        json: { sessionId: this.sessionId, pid: this.pid },
        retry: 'safe',
      })
      .catch(() => undefined); // already gone
  }

  private async open(
    spec: Pick<RequestSpec, 'json' | 'headers' | 'retry' | 'timeoutMs'>,
  ): Promise<Response> {
    this.opening = true;
    let response: Response;
    try {
      response = await this.http.send({
        method: 'POST',
        path: '/execute',
        signal: this.controller.signal,
        stream: true,
        ...spec,
      });
    } finally {
      this.opening = false;
    }
    this.requestId = response.headers.get('x-request-id') ?? this.requestId;
    this.processId = response.headers.get('x-process-id') ?? this.processId;
    const pid = Number(response.headers.get('x-process-pid'));
    if (Number.isInteger(pid) && pid > 0) this.pid = pid;
    if (this.aborted) {
      this.controller.abort(this.abortReason);
      throw abortedError(this.abortReason);
    }
    return response;
  }
}

/** The JSON data of an event; a SandboxError when it is not JSON (a broken proxy). */
export function eventData(message: EventSourceMessage): Record<string, unknown> {
  try {
    return JSON.parse(message.data) as Record<string, unknown>;
  } catch (err) {
    throw new SandboxError({
      code: 'invalid_response',
      status: 0,
      message: `An event "${message.event ?? 'message'}" whose data is not JSON`,
      cause: err,
    });
  }
}

function sleepFor(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * A streamed run reports its timeout in its result; `run`, `exec` and a process handle's
 * `wait` throw it, as the API does for a run that is not streamed.
 */
export function resultOrTimeout(
  result: ExecutionResult,
  timeoutS: number | undefined,
): ExecutionResult {
  if (!result.timedOut) return result;
  throw new ExecutionTimeoutError({
    code: 'execution_timeout',
    status: 408,
    message: 'The run exceeded its timeout and was killed',
    details: { timeout: timeoutS, executionTime: result.executionTime },
    stdout: result.stdout,
    stderr: result.stderr,
  });
}
