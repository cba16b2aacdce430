import { NetworkError } from './errors.js';
import { Files } from './files.js';
import { HttpClient, newIdempotencyKey, resolveOptions, type ClientOptions } from './http.js';
import type { ConnectOptions, CreateOptions, ListOptions } from './sandbox-options.js';
import { startInBackground, type ProcessHandle } from './process-handle.js';
import { Contexts } from './contexts.js';
import { requestForks, type ForkOptions } from './fork-options.js';
import { Processes } from './processes.js';
import { takeSnapshot, type SnapshotOptions } from './snapshots.js';
import {
  answerTimeoutMs,
  executeBody,
  programOf,
  runTimeoutS,
  secondsOf,
  type BackgroundRunOptions,
  type ForegroundRunOptions,
  type RunCallbacks,
  type RunInput,
  type RunOptions,
} from './run-options.js';
import { resultOrTimeout, RunStream } from './run-stream.js';
import { deleteSession, getInfo, listPage } from './session-calls.js';
import { SessionList } from './session-list.js';
import { Terminals } from './terminals.js';
import type {
  CodeContext,
  CreateContextBody,
  CreateSessionBody,
  EgressInfo,
  EgressPolicy,
  ExecutionEvent,
  ExecutionResult,
  Session,
  SessionInfo,
  SessionPage,
  Snapshot,
} from './types.js';

/** The options of a run, waited for or in the background. */
type AnyRunOptions = ForegroundRunOptions | BackgroundRunOptions;

/** The forks of a session, in order, and whether they kept its processes. */
export type Forks = Sandbox[] & { readonly processesKept: boolean };

export interface KillOptions {
  signal?: AbortSignal;
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
  /** The session's code contexts: create, list, delete, restart (cells: `runCode`). */
  readonly contexts: Contexts;
  /**
   * The session's terminals (shells on a pseudo-terminal): `open()` gives a handle, `create()`
   * a WebSocket URL to open once.
   */
  readonly terminals: Terminals;

  private constructor(
    private readonly http: HttpClient,
    /** The session's id (`ses_…`). */
    readonly id: string,
    private readonly previewBase: string,
    /** The X-Preview-Token of a private preview, when known. */
    readonly previewToken: string | undefined,
  ) {
    this.files = new Files(http, id);
    this.processes = new Processes(http, id);
    this.terminals = new Terminals(http, id, (pid) => this.processes.kill(pid));
    this.contexts = new Contexts(http, id);
  }

  /**
   * A new context (TypeScript in /workspace unless told; `language: 'bash'` for a shell
   * context, whose commands go through `runCommand`): `contexts.create`.
   */
  createContext(body: CreateContextBody = {}): Promise<CodeContext> {
    return this.contexts.create(body);
  }

  /**
   * Runs a cell in a code context: its variables, functions and imports stay for the next
   * cell; `results` holds the last expression's value (`text/plain`, `application/json`),
   * `error` what it threw. A cell that ended its context's process throws
   * ContextRestartedError (the next cell runs in a fresh context). With `onStdout`,
   * `onStderr`, `onResult` or `onError` the cell is streamed and each arrives as it comes.
   */
  runCode(
    code: string,
    options: Omit<RunOptions, 'contextId' | 'stdin'> & { context: CodeContext | string },
  ): Promise<ExecutionResult> {
    const { context, ...rest } = options;
    const contextId = typeof context === 'string' ? context : context.contextId;
    return this.execute({ code }, { ...rest, contextId });
  }

  /**
   * Runs a command in a shell context (`createContext({ language: 'bash' })`, ADR 59): one
   * bash that keeps its directory, variables and functions for the next command. `exitCode`
   * is the command's status. A command that ends its shell (`exit`) throws
   * ContextRestartedError; one that times out ends its shell too (`timedOut`); the next
   * command runs in a fresh shell either way.
   */
  runCommand(
    command: string,
    options: Omit<RunOptions, 'contextId' | 'stdin' | 'env'> & { context: CodeContext | string },
  ): Promise<ExecutionResult> {
    const { context, ...rest } = options;
    const contextId = typeof context === 'string' ? context : context.contextId;
    return this.execute({ command }, { ...rest, contextId });
  }

  /** Creates a session (with an Idempotency-Key, so that retries never make two). */
  static async create(options: CreateOptions = {}): Promise<Sandbox> {
    const {
      idempotencyKey,
      signal,
      ttl,
      ttlMs,
      metadata,
      resourceLimits,
      preview,
      egress,
      snapshotId,
      ...client
    } = options;
    const http = new HttpClient(resolveOptions(client));
    const body: CreateSessionBody = {
      ttl: secondsOf(ttlMs, ttl, ['ttlMs', 'ttl']),
      metadata,
      resourceLimits,
      preview,
      egress,
      snapshotId,
    };
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

  /**
   * A session made before (by this process or another); throws SessionNotFoundError. A
   * private preview's token comes with the session's info, so `previewHeaders()` works as
   * after `create` (sessions made before the service kept it need `previewToken` given).
   */
  static async connect(sessionId: string, options: ConnectOptions = {}): Promise<Sandbox> {
    const { previewToken, signal, ...client } = options;
    const http = new HttpClient(resolveOptions(client));
    const info = await getInfo(http, sessionId, signal);
    return new Sandbox(http, sessionId, info.previewUrl, previewToken ?? info.previewToken);
  }

  /**
   * The account's sessions, newest first: `for await (const s of Sandbox.list())` reads every
   * page; `await Sandbox.list({ limit, offset })` gives one page (as `listPage`).
   */
  static list(options: ListOptions = {}): SessionList {
    const { limit, offset, signal, ...client } = options;
    const http = new HttpClient(resolveOptions(client));
    return new SessionList(
      (pageLimit, pageOffset) => listPage(http, pageLimit, pageOffset, signal),
      limit,
      offset ?? 0,
    );
  }

  /** One page of the account's sessions, newest first (`limit` default 50, at most 100). */
  static listPage(options: ListOptions = {}): Promise<SessionPage> {
    const { limit, offset, signal, ...client } = options;
    return listPage(new HttpClient(resolveOptions(client)), limit, offset, signal);
  }

  /** Deletes a session by its id, without connecting to it; one already gone is no error. */
  static delete(
    sessionId: string,
    options: ClientOptions & { signal?: AbortSignal } = {},
  ): Promise<void> {
    const { signal, ...client } = options;
    return deleteSession(new HttpClient(resolveOptions(client)), sessionId, signal);
  }

  /**
   * Stores the session's files as a snapshot (ADR 44); `Sandbox.create({ snapshotId })`
   * starts new sessions from it. `processesKept` says whether processes were kept too.
   */
  snapshot(options: SnapshotOptions = {}): Promise<Snapshot> {
    return takeSnapshot(this.http, this.id, options);
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

  /**
   * New sessions, each with a copy-on-write copy of this one's files as they are now (its runs
   * go on), its limits, egress policy and metadata, and its own id, preview and expiry (ADR
   * 43). All or none: past the account's session limit, SessionLimitExceededError and no fork.
   *
   *     const [a, b] = await sandbox.fork({ count: 2 });
   */
  async fork(options: ForkOptions = {}): Promise<Forks> {
    const forked = await requestForks(this.http, this.id, options);
    const sandboxes = forked.sessions.map(
      (session) =>
        new Sandbox(this.http, session.sessionId, session.previewUrl, session.previewToken),
    );
    return Object.assign(sandboxes, { processesKept: forked.processesKept });
  }

  /** Deletes the session and everything in it. A session already gone is not an error. */
  delete(options: { signal?: AbortSignal } = {}): Promise<void> {
    return deleteSession(this.http, this.id, options.signal);
  }

  /**
   * Runs JavaScript or TypeScript (a string is code; `{ command }` runs a command instead)
   * and resolves with its result when it ends (a timeout throws ExecutionTimeoutError). With
   * `background: true`, resolves at once with a handle on the running process.
   */
  run(code: string | RunInput, options: BackgroundRunOptions): Promise<ProcessHandle>;
  run(code: string | RunInput, options?: ForegroundRunOptions): Promise<ExecutionResult>;
  async run(code: string | RunInput, options: AnyRunOptions = {}) {
    return this.launch(programOf(code, 'code'), options);
  }

  /**
   * Runs a shell command with bash (a string is a command; `{ code }` runs code instead), as
   * `run` does: its result, or with `background: true` a handle on the running process.
   */
  exec(command: string | RunInput, options: BackgroundRunOptions): Promise<ProcessHandle>;
  exec(command: string | RunInput, options?: ForegroundRunOptions): Promise<ExecutionResult>;
  async exec(command: string | RunInput, options: AnyRunOptions = {}) {
    return this.launch(programOf(command, 'command'), options);
  }

  /**
   * A run's events as they come: `for await (const event of sandbox.stream({ command }))` (a
   * string is code). `started` comes first, with the run's pid and process id. Events are
   * read as fast as the loop takes them, and the service slows the run's output down to that
   * pace. A connection that drops mid-run is resumed where it stopped (each event's id says
   * where; `Last-Event-ID`), so no output is lost or repeated. Leaving the loop early (break,
   * throw) only closes the connection: the run goes on (kill it with `processes.kill`).
   * Aborting `signal` kills the run. A fault after the run started is thrown.
   */
  async *stream(
    input: string | RunInput,
    options: Omit<RunOptions, RunCallbacks> = {},
  ): AsyncGenerator<ExecutionEvent, void, undefined> {
    const body = executeBody(this.id, programOf(input, 'code'), options, true);
    const run = new RunStream(this.http, this.id);
    const onAbort = (): void => run.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.signal?.aborted === true) onAbort();
    try {
      yield* run.events({ body, timeoutMs: this.answerTimeoutMs(options) });
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
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

  /** A run of `program`: its result, or with `background: true` its process handle at once. */
  private launch(
    program: { code: string } | { command: string },
    options: AnyRunOptions,
  ): Promise<ExecutionResult | ProcessHandle> {
    return options.background === true
      ? this.start(program, options)
      : this.execute(program, options);
  }

  private async execute(
    program: { code: string } | { command: string },
    options: RunOptions,
  ): Promise<ExecutionResult> {
    const { onStdout, onStderr, onResult, onError, ...rest } = options;
    const callbacks = [onStdout, onStderr, onResult, onError];
    // An abortable run is streamed: its pid comes at its start, so that an abort can kill it.
    if (callbacks.every((callback) => callback === undefined) && options.signal === undefined) {
      return this.http.json<ExecutionResult>({
        method: 'POST',
        path: '/execute',
        json: executeBody(this.id, program, rest, false),
        retry: 'refused',
        timeoutMs: this.answerTimeoutMs(options),
      });
    }
    for await (const event of this.stream(program, rest)) {
      if (event.type === 'stdout') onStdout?.(event.data);
      else if (event.type === 'stderr') onStderr?.(event.data);
      else if (event.type === 'cell_result') onResult?.(event.result);
      else if (event.type === 'cell_error') onError?.(event.error);
      else if (event.type === 'result') return resultOrTimeout(event.result, runTimeoutS(options));
    }
    throw new NetworkError({ code: 'network_error', status: 0, message: 'No result' });
  }

  /** A run in the background: its handle once its process started. */
  private start(
    program: { code: string } | { command: string },
    options: RunOptions,
  ): Promise<ProcessHandle> {
    const body = executeBody(this.id, program, options, true);
    return startInBackground(
      new RunStream(this.http, this.id),
      { body, timeoutMs: this.answerTimeoutMs(options) },
      {
        calls: this.processes,
        newStream: () => new RunStream(this.http, this.id),
        timeoutS: runTimeoutS(options),
      },
      options,
    );
  }

  /** How long a run's answer may take: its own timeout and the request's. */
  private answerTimeoutMs(options: RunOptions): number {
    return answerTimeoutMs(options, this.http.options.requestTimeoutMs);
  }
}
