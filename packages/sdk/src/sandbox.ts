import { errorFromResponse, ExecutionTimeoutError, SandboxError, statusOf } from './errors.js';
import { Files } from './files.js';
import { Processes } from './processes.js';
import type { EventSourceMessage } from 'eventsource-parser';
import {
  HttpClient,
  resolveOptions,
  retryDelayMs,
  type ClientOptions,
  type RequestSpec,
} from './http.js';
import { resumingEvents } from './sse.js';
import type {
  CreateSessionBody,
  EgressInfo,
  EgressPolicy,
  ExecuteBody,
  ExecutionEvent,
  ExecutionResult,
  CreateTerminalBody,
  Session,
  SessionInfo,
  SessionPage,
  TerminalMade,
} from './types.js';

/** A terminal made in a session: open `url` once with a WebSocket (see the API's terminals). */
export interface Terminal extends TerminalMade {
  /** `ws(s)://…?token=…`: opens it once, within `tokenExpiresAt`, from anywhere (a browser). */
  url: string;
}

export interface CreateOptions extends ClientOptions, CreateSessionBody {
  /**
   * Makes retries of this create return the same session (24 h). One is made for every
   * create when none is given, so that a retry after a lost answer never makes two sessions.
   */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

export interface ConnectOptions extends ClientOptions {
  /** The X-Preview-Token of a private preview (shown once, at creation). */
  previewToken?: string;
  signal?: AbortSignal;
}

/** What a run takes besides its code or command (see the API's execute). */
export interface RunOptions {
  /** Seconds; default the session's (30), at most 300 and the plan's cap. */
  timeout?: number;
  env?: Record<string, string>;
  /** Relative to /workspace. */
  workingDir?: string;
  /** Files written (atomically) before the run starts. */
  files?: ExecuteBody['files'];
  /** Aborting it ends the request and kills the run (a run outlives a dropped connection). */
  signal?: AbortSignal;
  /**
   * The run reads its stdin from `processes.writeStdin(pid, …)` (a streamed run's `started`
   * event gives the pid); else it reads nothing.
   */
  stdin?: boolean;
  /** Output as it comes (the run is then streamed); the result still holds all of it. */
  onStdout?: (data: string) => void;
  onStderr?: (data: string) => void;
}

export type RunInput = { code: string } | { command: string };

export interface KillOptions {
  signal?: AbortSignal;
}

/** A fresh idempotency key (UUID v4) from the runtime's crypto. */
function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}

/**
 * One session of the sandbox service: its files and processes last between calls until it
 * expires or is deleted.
 *
 *     const sandbox = await Sandbox.create();
 *     const { stdout } = await sandbox.run('console.log(1 + 1)');
 *     await sandbox.delete();
 */
export class Sandbox {
  readonly files: Files;
  /** The session's runs: list, kept output (`follow` live), stdin, kill. */
  readonly processes: Processes;
  readonly terminals: {
    /**
     * Makes a terminal (a shell on a pseudo-terminal) to open once with a WebSocket at `url`:
     * binary messages carry its bytes both ways, `{"type":"resize","cols","rows"}` resizes.
     */
    create: (body?: CreateTerminalBody, options?: { signal?: AbortSignal }) => Promise<Terminal>;
  };

  private constructor(
    private readonly http: HttpClient,
    /** The session's id (`ses_…`). */
    readonly id: string,
    private readonly previewBase: string,
    /** The X-Preview-Token of a private preview, when known. */
    readonly previewToken: string | undefined,
  ) {
    this.files = new Files(http, id);
    this.terminals = {
      create: async (body = {}, options = {}) => {
        const made = await http.json<TerminalMade>({
          method: 'POST',
          path: `/sessions/${encodeURIComponent(id)}/terminals`,
          json: body,
          signal: options.signal,
          retry: 'refused',
        });
        const url = new URL(`${http.options.apiUrl}${made.path}`);
        url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
        url.searchParams.set('token', made.token);
        return { ...made, url: url.toString() };
      },
    };
    this.processes = new Processes(http, id);
  }

  /** Creates a session (with an Idempotency-Key, so that retries never make two). */
  static async create(options: CreateOptions = {}): Promise<Sandbox> {
    const { idempotencyKey, signal, ttl, metadata, resourceLimits, preview, egress, ...client } =
      options;
    const http = new HttpClient(resolveOptions(client));
    const body: CreateSessionBody = { ttl, metadata, resourceLimits, preview, egress };
    const session = await http.json<Session>({
      method: 'POST',
      path: '/sessions/create',
      json: body,
      headers: { 'idempotency-key': idempotencyKey ?? newIdempotencyKey() },
      signal,
      retry: 'safe',
    });
    return new Sandbox(http, session.sessionId, session.previewUrl, session.previewToken);
  }

  /** A session made before (by this process or another); throws SessionNotFoundError. */
  static async connect(sessionId: string, options: ConnectOptions = {}): Promise<Sandbox> {
    const { previewToken, signal, ...client } = options;
    const http = new HttpClient(resolveOptions(client));
    const info = await getInfo(http, sessionId, signal);
    return new Sandbox(http, sessionId, info.previewUrl, previewToken);
  }

  /** One page of the account's sessions, newest first. */
  static list(
    options: ClientOptions & { limit?: number; offset?: number; signal?: AbortSignal } = {},
  ): Promise<SessionPage> {
    const { limit, offset, signal, ...client } = options;
    return new HttpClient(resolveOptions(client)).json<SessionPage>({
      method: 'GET',
      path: '/sessions',
      query: { limit, offset },
      signal,
      retry: 'safe',
    });
  }

  /** State, counts and metadata; reading does not wake the session. */
  info(options: { signal?: AbortSignal } = {}): Promise<SessionInfo> {
    return getInfo(this.http, this.id, options.signal);
  }

  /** The session's egress policy; reading does not wake the session. */
  egress(options: { signal?: AbortSignal } = {}): Promise<EgressInfo> {
    return this.http.json<EgressInfo>({
      method: 'GET',
      path: `/sessions/${encodeURIComponent(this.id)}/egress`,
      signal: options.signal,
      retry: 'safe',
    });
  }

  /**
   * Replaces the session's egress policy, at once: connections it now forbids are cut.
   * `{ default: 'deny' }` is deny-all, `{}` allow-all.
   */
  setEgress(policy: EgressPolicy, options: { signal?: AbortSignal } = {}): Promise<EgressInfo> {
    return this.http.json<EgressInfo>({
      method: 'PUT',
      path: `/sessions/${encodeURIComponent(this.id)}/egress`,
      json: policy,
      signal: options.signal,
      retry: 'safe',
    });
  }

  /** Deletes the session and everything in it. A session already gone is not an error. */
  async delete(options: { signal?: AbortSignal } = {}): Promise<void> {
    try {
      await this.http.send({
        method: 'DELETE',
        path: `/sessions/${encodeURIComponent(this.id)}`,
        signal: options.signal,
        retry: 'safe',
      });
    } catch (err) {
      // A retry after a lost answer finds it deleted: what was asked is done.
      if (!(err instanceof SandboxError && err.code === 'session_not_found')) throw err;
    }
  }

  /** Runs JavaScript or TypeScript; resolves when it ends (a timeout throws). */
  run(code: string, options: RunOptions = {}): Promise<ExecutionResult> {
    return this.execute({ code }, options);
  }

  /** Runs a shell command; resolves when it ends (a timeout throws). */
  exec(command: string, options: RunOptions = {}): Promise<ExecutionResult> {
    return this.execute({ command }, options);
  }

  /**
   * A run's events as they come: `for await (const event of sandbox.stream({ code }))`.
   * Events are read as fast as the loop takes them, and the service slows the run's output
   * down to that pace. A connection that drops mid-run is resumed where it stopped (each
   * event's id says where; `Last-Event-ID`), so no output is lost or repeated. Leaving the loop
   * early (break, throw) or aborting `signal` kills the run on the service. A fault after the
   * run started is thrown.
   */
  async *stream(
    input: RunInput,
    options: Omit<RunOptions, 'onStdout' | 'onStderr'> = {},
  ): AsyncGenerator<ExecutionEvent, void, undefined> {
    const run = new RunStream(this.http, this.id);
    const onAbort = (): void => run.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.signal?.aborted) onAbort();
    let finished = false;
    try {
      for await (const message of run.messages(this.executeBody(input, options, true))) {
        const data = JSON.parse(message.data) as Record<string, unknown>;
        switch (message.event) {
          case 'started':
            yield { type: 'started', pid: data.pid as number, processId: data.processId as string };
            break;
          case 'stdout':
          case 'stderr':
            yield { type: message.event, data: data.data as string };
            break;
          case 'exit':
            yield { type: 'exit', code: data.code as number };
            break;
          case 'result':
            finished = true;
            yield { type: 'result', result: data as unknown as ExecutionResult };
            return;
          case 'error':
            finished = true;
            throw errorFromResponse(statusOf(data.code), { error: data }, run.context());
          default:
            break; // an event a newer service added
        }
      }
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
      // Left early, or given up on: the run is killed, not left to run to its timeout.
      await run.close(!finished);
    }
  }

  /**
   * The URL of a web app listening on `port` in the session (3000: the session's own
   * preview address). A private preview also needs `previewHeaders()`.
   */
  previewUrl(port = 3000): string {
    if (port === 3000) return this.previewBase;
    const url = new URL(this.previewBase);
    url.hostname = `${port}-${url.hostname}`;
    return url.toString().replace(/\/$/, '');
  }

  /** The headers a private preview needs (X-Preview-Token), or none. */
  previewHeaders(): Record<string, string> {
    return this.previewToken === undefined ? {} : { 'x-preview-token': this.previewToken };
  }

  private async execute(input: RunInput, options: RunOptions): Promise<ExecutionResult> {
    const { onStdout, onStderr, ...rest } = options;
    // An abortable run is streamed: its pid comes at its start, so that an abort can kill it.
    if (onStdout === undefined && onStderr === undefined && options.signal === undefined) {
      return this.http.json<ExecutionResult>({
        method: 'POST',
        path: '/execute',
        json: this.executeBody(input, rest, false),
        signal: options.signal,
        retry: 'refused',
      });
    }
    for await (const event of this.stream(input, rest)) {
      if (event.type === 'stdout') onStdout?.(event.data);
      else if (event.type === 'stderr') onStderr?.(event.data);
      else if (event.type === 'result') return resultOrTimeout(event.result, options.timeout);
    }
    throw new SandboxError({ code: 'network_error', status: 0, message: 'No result' });
  }

  private executeBody(input: RunInput, options: RunOptions, stream: boolean): ExecuteBody {
    return {
      sessionId: this.id,
      ...input,
      files: options.files,
      env: options.env,
      timeout: options.timeout,
      workingDir: options.workingDir,
      ...(options.stdin === true ? { stdin: true } : {}),
      stream,
    };
  }
}

/** How often a dropped run stream is resumed before the failure is thrown. */
const MAX_RESUMES = 5;

/** How long an aborted run gets to start (and name its pid, to be killed). */
const ABORT_WAIT_MS = 5_000;

/**
 * One streamed run's connection(s): the first request, then, if the connection drops before
 * the run's last event, reconnects with `Last-Event-ID` (the last event's id, or the run's
 * process id from the headers when no event came yet). Knows the run's pid, to kill it.
 */
class RunStream {
  private readonly controller = new AbortController();
  private pid: number | undefined;
  private processId: string | undefined;
  private requestId: string | undefined;
  private abortReason: unknown;
  private aborted = false;
  /** The first request is under way: its headers will name the run, to kill it. */
  private opening = false;

  constructor(
    private readonly http: HttpClient,
    private readonly sessionId: string,
  ) {}

  context(): { requestId?: string } {
    return this.requestId === undefined ? {} : { requestId: this.requestId };
  }

  /**
   * The caller gave up: the stream ends (and `close` kills the run). A run not yet started
   * gets ABORT_WAIT_MS to start, so that its pid is known and it can be killed.
   */
  abort(reason: unknown): void {
    this.aborted = true;
    this.abortReason = reason;
    if (this.opening) {
      setTimeout(() => this.controller.abort(reason), ABORT_WAIT_MS);
    } else this.controller.abort(reason);
  }

  async *messages(body: ExecuteBody): AsyncGenerator<EventSourceMessage> {
    const ended = () =>
      new SandboxError({
        code: 'network_error',
        status: 0,
        message: 'The run stream ended before its result',
        ...this.context(),
      });
    try {
      yield* resumingEvents((lastEventId, resumes) => this.reopen(body, lastEventId, resumes), {
        maxResumes: MAX_RESUMES,
        aborted: () => this.aborted,
        exhausted: ended,
      });
    } catch (err) {
      throw this.aborted ? this.abortError() : err;
    }
    throw ended();
  }

  /**
   * The run's first request, or a reconnect after the last event received (the process id
   * from the headers when no event came yet); undefined when there is nothing to resume.
   */
  private async reopen(
    body: ExecuteBody,
    lastEventId: string | undefined,
    resumes: number,
  ): Promise<Response | undefined> {
    if (resumes === 0) return this.open({ json: body, retry: 'refused' });
    if (this.aborted) throw this.abortError();
    const resumeAt =
      lastEventId ?? (this.processId === undefined ? undefined : `${this.processId}:0:0`);
    if (resumeAt === undefined || !/^proc_/.test(resumeAt)) return undefined;
    await sleepFor(retryDelayMs(resumes - 1));
    const response = await this.open({
      json: { sessionId: this.sessionId, stream: true },
      headers: { 'last-event-id': resumeAt },
      retry: 'safe',
    });
    return response.status === 204 ? undefined : response; // 204: its result was sent
  }

  /** The caller's abort reason, as an error to throw. */
  private abortError(): Error {
    const reason = this.abortReason;
    return reason instanceof Error ? reason : new Error('The run was aborted', { cause: reason });
  }

  /** Ends the stream; `kill`: the run is killed on the service if it still runs. */
  async close(kill: boolean): Promise<void> {
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

  private async open(spec: Pick<RequestSpec, 'json' | 'headers' | 'retry'>): Promise<Response> {
    this.opening = true;
    let response: Response;
    try {
      response = await this.http.send({
        method: 'POST',
        path: '/execute',
        signal: this.controller.signal,
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
      throw this.abortError();
    }
    return response;
  }
}

function sleepFor(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * A streamed run reports its timeout in its result; `run` and `exec` throw it either way, as
 * the API does for a run that is not streamed.
 */
function resultOrTimeout(result: ExecutionResult, timeoutS: number | undefined): ExecutionResult {
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

function getInfo(
  http: HttpClient,
  sessionId: string,
  signal: AbortSignal | undefined,
): Promise<SessionInfo> {
  return http.json<SessionInfo>({
    method: 'GET',
    path: `/sessions/${encodeURIComponent(sessionId)}`,
    signal,
    retry: 'safe',
  });
}
