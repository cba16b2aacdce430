import { errorFromResponse, ExecutionTimeoutError, SandboxError, statusOf } from './errors.js';
import { Files } from './files.js';
import { HttpClient, resolveOptions, type ClientOptions } from './http.js';
import { serverSentEvents } from './sse.js';
import type {
  CreateSessionBody,
  ExecuteBody,
  ExecutionEvent,
  ExecutionResult,
  CreateTerminalBody,
  KillResult,
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
  /** Aborting it ends the request, and the service kills the run. */
  signal?: AbortSignal;
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
  readonly processes: { kill: (pid?: number, options?: KillOptions) => Promise<KillResult> };
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
    this.processes = {
      kill: (pid, options = {}) =>
        http.json<KillResult>({
          method: 'POST',
          path: '/execution/kill',
          json: pid === undefined ? { sessionId: id } : { sessionId: id, pid },
          signal: options.signal,
          retry: 'safe',
        }),
    };
  }

  /** Creates a session (with an Idempotency-Key, so that retries never make two). */
  static async create(options: CreateOptions = {}): Promise<Sandbox> {
    const { idempotencyKey, signal, ttl, metadata, resourceLimits, preview, ...client } = options;
    const http = new HttpClient(resolveOptions(client));
    const body: CreateSessionBody = { ttl, metadata, resourceLimits, preview };
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
   * down to that pace. Leaving the loop early (break, throw) or aborting `signal` ends the
   * request, and the service kills the run. A fault after the run started is thrown.
   */
  async *stream(
    input: RunInput,
    options: Omit<RunOptions, 'onStdout' | 'onStderr'> = {},
  ): AsyncGenerator<ExecutionEvent, void, undefined> {
    const abort = new AbortController();
    const onAbort = (): void => abort.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.signal?.aborted) onAbort();
    try {
      const response = await this.http.send({
        method: 'POST',
        path: '/execute',
        json: this.executeBody(input, options, true),
        signal: abort.signal,
        retry: 'refused',
      });
      if (response.body === null) return;
      const requestId = response.headers.get('x-request-id') ?? undefined;
      for await (const message of serverSentEvents(response.body)) {
        const data = JSON.parse(message.data) as Record<string, unknown>;
        switch (message.event) {
          case 'stdout':
          case 'stderr':
            yield { type: message.event, data: data.data as string };
            break;
          case 'exit':
            yield { type: 'exit', code: data.code as number };
            break;
          case 'result':
            yield { type: 'result', result: data as unknown as ExecutionResult };
            return;
          case 'error':
            throw errorFromResponse(statusOf(data.code), { error: data }, { requestId });
          default:
            break; // an event a newer service added
        }
      }
      throw new SandboxError({
        code: 'network_error',
        status: 0,
        message: 'The run stream ended before its result',
        requestId,
      });
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
      // Left early: the connection closes, and the service kills the run.
      abort.abort();
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
    if (onStdout === undefined && onStderr === undefined) {
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
      stream,
    };
  }
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
