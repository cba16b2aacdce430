import { InvalidRequestError } from './errors.js';
import { base64 } from './files.js';
import type { CellError, CellResult, ExecuteBody, RunFile } from './types.js';

/**
 * What a run runs: `{ code }` (JavaScript or TypeScript) or `{ command }` (bash), never both
 * (the type refuses `{ code, command }`, and so does the SDK at run time). `run`, `exec` and
 * `stream` also take a string: code for `run` and `stream`, a command for `exec`.
 */
export type RunInput = { code: string; command?: never } | { command: string; code?: never };

/** A file written (atomically, with the others) before a run starts. */
export interface RunFileInput {
  /** Relative to /workspace. */
  path: string;
  /** Text (written as UTF-8) or bytes. */
  content: string | Uint8Array;
  /** @deprecated Give bytes as a Uint8Array instead of base64 text with `encoding: 'base64'`. */
  encoding?: RunFile['encoding'];
}

/** What a run takes besides its code or command (see the API's execute). */
export interface RunOptions {
  /**
   * How long the run may take, in milliseconds (rounded up to whole seconds); default the
   * session's (30 s), at most 300 s and the plan's cap. Past it the run is killed.
   */
  timeoutMs?: number;
  /** @deprecated Seconds: use `timeoutMs`. */
  timeout?: number;
  env?: Record<string, string>;
  /** Relative to /workspace. */
  workingDir?: string;
  /** Files written (atomically) before the run starts. */
  files?: RunFileInput[];
  /**
   * Aborting it ends the call and kills the run (for a background run: until its handle is
   * given; then `handle.kill()`). Leaving a `stream` loop does not kill it.
   */
  signal?: AbortSignal;
  /**
   * The run reads its stdin from `writeStdin` (a process handle's, or
   * `processes.writeStdin(pid, …)` with the pid of the `started` event); else it reads nothing.
   */
  stdin?: boolean;
  /**
   * Runs the code as a cell of this code context (`sandbox.contexts.create()`): its variables
   * stay for the next cell, and the result carries `results` and `error`.
   */
  contextId?: string;
  /** Output as it comes (the run is then streamed); the result still holds all of it. */
  onStdout?: (data: string) => void;
  onStderr?: (data: string) => void;
  /**
   * A context cell's values, each as its own event before the cell's end (the run is then
   * streamed): what `display` showed, then the last expression's (`isMain`). The result's
   * `results` still holds them all.
   */
  onResult?: (result: CellResult) => void;
  /** A context cell's error, before the cell's end (streamed); also the result's `error`. */
  onError?: (error: CellError) => void;
}

/** The callbacks that stream a run. */
export type RunCallbacks = 'onStdout' | 'onStderr' | 'onResult' | 'onError';

/** A run started in the background: `run`/`exec` give its process handle at once. */
export interface BackgroundRunOptions extends RunOptions {
  background: true;
}

/** A run waited for: `run`/`exec` resolve with its result when it ends. */
export interface ForegroundRunOptions extends RunOptions {
  background?: false;
}

/** The longest timeout a run may have (s): what an answer may take when none is given. */
export const MAX_RUN_TIMEOUT_S = 300;

/** The program of `input`; a string is `code` or `command` as the method says. */
export function programOf(
  input: string | RunInput,
  stringIs: 'code' | 'command',
): { code: string } | { command: string } {
  if (typeof input === 'string') {
    return stringIs === 'code' ? { code: input } : { command: input };
  }
  const { code, command } = input as { code?: unknown; command?: unknown };
  if (code !== undefined && command !== undefined) {
    throw invalid('Give code or command, not both', 'code');
  }
  if (typeof code === 'string') return { code };
  if (typeof command === 'string') return { command };
  throw invalid('Give the code or the command to run (a string)', 'command');
}

/** Whole seconds of a duration given in ms (or, deprecated, in seconds). */
export function secondsOf(
  ms: number | undefined,
  seconds: number | undefined,
  names: [ms: string, seconds: string],
): number | undefined {
  if (ms !== undefined && seconds !== undefined) {
    throw invalid(`Give ${names[0]} or ${names[1]} (deprecated), not both`, names[0]);
  }
  return ms === undefined ? seconds : Math.ceil(ms / 1000);
}

/** The files of a run as the API takes them: bytes base64-encoded. */
export function wireFiles(files: RunFileInput[] | undefined): RunFile[] | undefined {
  return files?.map(({ path, content, encoding }) =>
    typeof content === 'string'
      ? { path, content, ...(encoding === undefined ? {} : { encoding }) }
      : { path, content: base64(content), encoding: 'base64' as const },
  );
}

/** The body of a run. */
export function executeBody(
  sessionId: string,
  program: { code: string } | { command: string },
  options: RunOptions,
  stream: boolean,
): ExecuteBody {
  return {
    sessionId,
    ...program,
    files: wireFiles(options.files),
    env: options.env,
    timeout: runTimeoutS(options),
    workingDir: options.workingDir,
    ...(options.stdin === true ? { stdin: true } : {}),
    ...(options.contextId === undefined ? {} : { contextId: options.contextId }),
    stream,
  };
}

/** The run's timeout in seconds, if one is given. */
export function runTimeoutS(options: RunOptions): number | undefined {
  return secondsOf(options.timeoutMs, options.timeout, ['timeoutMs', 'timeout']);
}

/** How long a run's answer may take to come: the run's timeout and the request's own. */
export function answerTimeoutMs(options: RunOptions, requestTimeoutMs: number): number {
  if (requestTimeoutMs <= 0) return 0;
  return (runTimeoutS(options) ?? MAX_RUN_TIMEOUT_S) * 1000 + requestTimeoutMs;
}

function invalid(message: string, field: string): InvalidRequestError {
  return new InvalidRequestError({
    code: 'invalid_request',
    status: 0,
    message,
    details: { field },
  });
}
