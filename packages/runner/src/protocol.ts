import type {
  FileChange,
  FileListing,
  FileOperation,
  FileStat,
  MadeDirectory,
  RemovedFile,
  RenamedFile,
  WatchEndReason,
} from '@sandbox/contract';
import type { ContextLanguage, RunResult } from '@sandbox/contract/run';
import type { ErrorCode } from '@sandbox/errors';

/**
 * The runner's protocol: one JSON object per line on its stdin (requests) and stdout (events),
 * every event carrying the id of the request it answers. Bytes travel base64-encoded.
 */

export interface FileInput {
  path: string;
  /** base64 */
  content: string;
}

/**
 * A run, as an `exec` request asks for it: a `command` run is served by the runner's front,
 * a `code` run by the runner's Node (`startRun`; ADR 47).
 */
export interface RunSpec {
  command?: string;
  code?: string;
  env: Record<string, string>;
  cwd: string;
  timeoutMs: number;
  /** stdin a pipe written through `input` requests (`RunHandle.input`; else /dev/null). */
  stdin?: boolean;
}

export type RunnerRequest =
  | ({
      id: number;
      op: 'exec';
      /**
       * Code run as a cell of this code context (ADR 42), or a command in this shell context
       * (ADR 59), not as a process of its own.
       */
      contextId?: string;
    } & RunSpec)
  | {
      id: number;
      op: 'terminal';
      argv: string[];
      env: Record<string, string>;
      cwd: string;
      cols: number;
      rows: number;
    }
  /**
   * Bytes (base64) for a terminal's or run's input; `end`: close it instead. Answered with
   * `taken` once the process took them (or, cancelled, with what it took so far).
   */
  | { id: number; op: 'input'; target: number; data: string; end?: boolean }
  | { id: number; op: 'resize'; target: number; cols: number; rows: number }
  | { id: number; op: 'cancel'; target: number }
  | { id: number; op: 'pause' | 'resume'; target: number }
  /** `armedShells`: the front's shells waiting for a run (ADR 48), none of the user's. */
  | { id: number; op: 'kill'; pid: number; armedShells?: number[] }
  | { id: number; op: 'stats'; armedShells?: number[] }
  | { id: number; op: 'writeFiles'; files: FileInput[] }
  | { id: number; op: 'readFile'; path: string }
  | { id: number; op: 'listFiles'; path: string; offset: number; limit: number }
  /** stat, remove, rename, mkdir: each answered with its own event (FILE_OPERATION_EVENTS). */
  | ({ id: number } & FileOperation)
  /**
   * A watch of a workspace directory (ADR 60), served by the front: `watching`, then `changes`
   * (and `overflow`) until a `cancel` of it or the directory's end (`unwatched`).
   */
  | { id: number; op: 'watch'; path: string; recursive: boolean }
  | { id: number; op: 'missingPackages'; code: string; cwd: string }
  | { id: number; op: 'installBundle'; cwd: string; bundle: string }
  /** The session's code contexts (ADR 42): answered with `contexts` (the one acted on, or all). */
  | {
      id: number;
      op: 'context';
      action: 'create' | 'list' | 'delete' | 'restart';
      contextId?: string;
      language?: ContextLanguage;
      cwd?: string;
      env?: Record<string, string>;
    }
  /** `settled`: answered once the runner's start-up work is done (warm pool members). */
  | { id: number; op: 'ping'; settled?: boolean };

export type RunnerEvent =
  | { id: number; ev: 'stdout' | 'stderr' | 'chunk'; data: string }
  /**
   * An exec's or terminal's process is running, with its pid. The front says a command run's
   * with its first output or its result when either comes within 2 ms (one write for a short
   * run), and at once for a run that takes stdin.
   */
  | { id: number; ev: 'started'; pid: number }
  /**
   * A run's process exited: its result. Output of processes it left holding its pipes may
   * follow, until `exec` says the pipes closed.
   */
  | ({ id: number; ev: 'result' } & RunResult)
  /** A file read: the file is open; `chunk` events follow. */
  | { id: number; ev: 'opened'; size: number }
  /** A run's output pipes closed (after its `result`): nothing more comes for it. */
  | { id: number; ev: 'exec' }
  | { id: number; ev: 'killed'; pids: number[] }
  /** A terminal's shell ended: its exit code (128 + the signal's number for a signal). */
  | { id: number; ev: 'exited'; exitCode: number }
  | { id: number; ev: 'stats'; filesCount: number; activeProcesses: number }
  | { id: number; ev: 'written'; files: { path: string; size: number }[] }
  | { id: number; ev: 'read'; size: number }
  | ({ id: number; ev: 'listed' } & FileListing)
  | ({ id: number; ev: 'stat' } & FileStat)
  | ({ id: number; ev: 'removed' } & RemovedFile)
  | ({ id: number; ev: 'renamed' } & RenamedFile)
  | ({ id: number; ev: 'madeDirectory' } & MadeDirectory)
  | { id: number; ev: 'pong'; pid: number }
  /** A watch began: how many directories it covers. */
  | { id: number; ev: 'watching'; directories: number }
  | { id: number; ev: 'changes'; changes: FileChange[] }
  /** The kernel's queue of a watch's events overflowed: changes were lost. */
  | { id: number; ev: 'overflow' }
  | { id: number; ev: 'unwatched'; reason: WatchEndReason }
  | { id: number; ev: 'packages'; packages: { name: string; spec: string }[] }
  | { id: number; ev: 'installed' }
  | { id: number; ev: 'contexts'; contexts: ContextInfo[] }
  | { id: number; ev: 'flow' }
  /** Input bytes the process took. */
  | { id: number; ev: 'taken'; bytes: number }
  | {
      id: number;
      ev: 'error';
      code: ErrorCode;
      message: string;
      details?: Record<string, unknown>;
    };

/** Events that carry part of a request's progress; every other event ends its request. */
export type StreamEventName =
  | 'stdout'
  | 'stderr'
  | 'chunk'
  | 'started'
  | 'opened'
  | 'result'
  | 'watching'
  | 'changes'
  | 'overflow';
export type FinalEventName = Exclude<RunnerEvent['ev'], StreamEventName>;

/** One entry per final event: the compiler rejects a missing one. */
const FINAL: Record<FinalEventName, true> = {
  exec: true,
  exited: true,
  killed: true,
  stats: true,
  written: true,
  read: true,
  listed: true,
  stat: true,
  removed: true,
  renamed: true,
  madeDirectory: true,
  pong: true,
  unwatched: true,
  packages: true,
  installed: true,
  contexts: true,
  flow: true,
  taken: true,
  error: true,
};

/** The events that end a request. */
export const FINAL_EVENTS: ReadonlySet<string> = new Set(Object.keys(FINAL));

/** The event that answers each file operation. */
export const FILE_OPERATION_EVENTS = {
  statFile: 'stat',
  removeFile: 'removed',
  renameFile: 'renamed',
  makeDirectory: 'madeDirectory',
} as const satisfies Record<FileOperation['op'], FinalEventName>;

/** A failure the runner reports to the agent with a code of the service's table. */
export class RunnerError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'RunnerError';
  }
}

/** What a context is, as the API shows it. */
export interface ContextInfo {
  contextId: string;
  /** `bash`: a shell context (ADR 59), whose cells are commands. */
  language: ContextLanguage;
  cwd: string;
  createdAt: string;
}
