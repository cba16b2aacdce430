import type { operations } from './generated/api.js';

/*
 * The API's request and response shapes, named: each is taken from the types generated from
 * the gateway's OpenAPI document (src/generated/api.ts), so that they cannot drift apart.
 */

type JsonOf<T> = T extends { content: { 'application/json': infer Body } } ? Body : never;
type Ok<Op extends keyof operations> = operations[Op]['responses'] extends infer R
  ? R extends { 200: infer Success }
    ? JsonOf<Success>
    : R extends { 201: infer Created }
      ? JsonOf<Created>
      : never
  : never;
type BodyOf<Op extends keyof operations> = JsonOf<operations[Op]['requestBody']>;

/** A new session (spec 2.1); `previewToken` only for a private preview (`info()` shows it too). */
export type Session = Ok<'createSession'>;
/** A snapshot of a session's files (ADR 44). */
export type Snapshot = Ok<'createSnapshot'>;
/** What `Sandbox.info()` reads (spec 2.3): state, counts, metadata, a private preview's token. */
export type SessionInfo = Ok<'getSession'>;
/** One page of `Sandbox.list()`. */
export type SessionPage = Ok<'listSessions'>;
/** One page of the account's snapshots, newest first. */
export type SnapshotPage = Ok<'listSnapshots'>;
export type SessionState = SessionInfo['state'];
/** The body of a session create: ttl, metadata, resourceLimits, preview. */
export type CreateSessionBody = BodyOf<'createSession'>;
/** The body of a fork: `count` (1…10) and `processes` (ADR 43). */
export type ForkBody = BodyOf<'forkSession'>;
/** A fork's answer: the new sessions, and whether they kept the source's processes. */
export type ForkResult = Ok<'forkSession'>;
/** Where a session's sandbox may connect: `default` and `allow`/`deny` CIDRs (ADR 30). */
export type EgressPolicy = BodyOf<'setEgress'>;
/** A session's egress policy as the API shows it (normalised). */
export type EgressInfo = Ok<'getEgress'>;
/** The body of a run, as the API takes it. */
export type ExecuteBody = BodyOf<'execute'>;
/** How a run ended (spec 2.6). */
export type ExecutionResult = Ok<'execute'>;
/** A file given with a run, written before it starts. */
export type RunFile = NonNullable<ExecuteBody['files']>[number];
export type FileList = Ok<'listFiles'>;
export type FileEntry = FileList['files'][number];
export type WrittenFile = Ok<'writeFile'>;
/** What an entry of /workspace is (`files.stat`); a symlink is described itself. */
export type FileStat = Ok<'statFile'>;
export type FileType = FileStat['type'];
export type RemovedFile = Ok<'removeFile'>;
export type RenamedFile = Ok<'renameFile'>;
export type MadeDirectory = Ok<'makeDirectory'>;
export type KillResult = Ok<'killProcesses'>;
/** The body of a terminal's creation: shell, cols, rows, env, cwd. */
export type CreateTerminalBody = BodyOf<'createTerminal'>;
/** A terminal made and not opened yet, as the API answers it. */
export type TerminalMade = Ok<'createTerminal'>;

/** A code context (`ctx_…`): a long-lived process whose variables stay between cells. */
export type CodeContext = Ok<'createContext'>;
/** The body of a context's creation: language, cwd, env. */
export type CreateContextBody = BodyOf<'createContext'>;
/** One value of a cell: its MIME bundle (`text/plain` always, `application/json` where it serializes) and `isMain`. */
export type CellResult = NonNullable<ExecutionResult['results']>[number];
/** What a cell threw. */
export type CellError = NonNullable<ExecutionResult['error']>;

/** A run of the session (running or kept), as the process list shows it. */
export type ProcessInfo = Ok<'getProcess'>;
/** A run's kept output from an offset, as text, and the offsets to ask for next. */
export type ProcessOutput = Ok<'processOutput'>;
export type StdinResult = Ok<'writeStdin'>;

/** One event of a streamed run, in the order the service sends them. */
export type ExecutionEvent =
  /**
   * First, for every run whose process started (not a code run whose package install
   * failed): its pid and process id (`proc_…`), for `processes` and a handle.
   */
  | { type: 'started'; pid: number; processId: string }
  | { type: 'stdout'; data: string }
  | { type: 'stderr'; data: string }
  /**
   * A context cell's value, before `exit` (`runCode`, or `contextId`): what `display` showed,
   * then the last expression's (`isMain`); each is also in the result's `results`.
   */
  | { type: 'cell_result'; result: CellResult }
  /** A context cell's error, before `exit`; also the result's `error`. */
  | { type: 'cell_error'; error: CellError }
  | { type: 'exit'; code: number }
  | { type: 'result'; result: ExecutionResult };

/** One event of a run's output followed live (`processes.follow`). */
export type OutputEvent =
  | { type: 'stdout'; data: string }
  | { type: 'stderr'; data: string }
  /** Output between the reader's position and here went at the plan's cap. */
  | { type: 'gap'; stdout: number; stderr: number }
  /** The last event: the run ended and nothing holds its pipes any more. */
  | { type: 'end'; process: ProcessInfo };
