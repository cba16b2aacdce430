import { NetworkError, RunNotStartedError } from './errors.js';
import { resultOrTimeout, type RunProcess, type RunStart, type RunStream } from './run-stream.js';
import type {
  ExecutionEvent,
  ExecutionResult,
  KillResult,
  OutputEvent,
  ProcessInfo,
  ProcessOutput,
  StdinResult,
} from './types.js';
import { abortedError } from './watchdog.js';

export interface ProcessCallOptions {
  signal?: AbortSignal;
}

/** Where to read a run's kept output from: byte offsets of each stream (default 0). */
export interface OutputOptions extends ProcessCallOptions {
  stdoutOffset?: number;
  stderrOffset?: number;
}

/** A pid (the newest run with it) or a process id (`proc_…`, never used again). */
export type ProcessRef = number | string;

/** The calls on a session's runs that a handle makes (what `Processes` does). */
export interface ProcessCalls {
  get(ref: ProcessRef, options?: ProcessCallOptions): Promise<ProcessInfo>;
  output(ref: ProcessRef, options?: OutputOptions): Promise<ProcessOutput>;
  follow(ref: ProcessRef, options?: OutputOptions): AsyncGenerator<OutputEvent, void, undefined>;
  writeStdin(
    ref: ProcessRef,
    data: string | Uint8Array,
    options?: ProcessCallOptions & { close?: boolean },
  ): Promise<StdinResult>;
  closeStdin(ref: ProcessRef, options?: ProcessCallOptions): Promise<StdinResult>;
  kill(ref: ProcessRef, options?: ProcessCallOptions): Promise<KillResult>;
}

/** What a handle needs besides its process: the calls, and a stream to resume its run on. */
export interface HandleDeps {
  calls: ProcessCalls;
  newStream: () => RunStream;
  /** The run's timeout (s), when known: what a timeout error says. */
  timeoutS?: number | undefined;
}

/** Output callbacks fed from the run's stream in the background, and its end. */
interface Feed {
  result: Promise<ExecutionResult>;
  stop: () => void;
  stopped: boolean;
}

/**
 * A run of the session, running or ended: what `run`/`exec` give with `background: true`,
 * and `processes.connect(pidOrId)`. The run lives on the service, not in this object:
 * dropping the handle, or leaving a `follow` loop, never stops it; `kill()` does.
 *
 *     const server = await sandbox.exec('npm run dev', { background: true });
 *     for await (const event of server.follow()) if (event.type === 'stdout') …
 *     await server.kill();
 */
export class ProcessHandle {
  /** The run's pid in the sandbox (used again by a new run after a deep sleep). */
  readonly pid: number;
  /** The run's process id (`proc_…`): it names this run for good. */
  readonly id: string;

  /** @internal Made by `run`/`exec` and `processes.connect`. */
  constructor(
    process: RunProcess,
    private readonly deps: HandleDeps,
    private readonly feed?: Feed,
  ) {
    this.pid = process.pid;
    this.id = process.id;
  }

  /**
   * How the run ended, once it has (now, if it has already): its whole result, as `run`
   * gives it; a timeout throws ExecutionTimeoutError. Aborting `signal` stops the wait, not
   * the run.
   */
  async wait(options: ProcessCallOptions = {}): Promise<ExecutionResult> {
    if (this.feed !== undefined && !this.feed.stopped) {
      try {
        return await untilAborted(this.feed.result, options.signal);
      } catch (err) {
        // Disconnected while waiting: the result is read again, without the callbacks.
        if (!this.feed.stopped || options.signal?.aborted === true) throw err;
      }
    }
    const run = this.deps.newStream();
    const onAbort = (): void => run.abort(options.signal?.reason, false);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.signal?.aborted) onAbort();
    try {
      for await (const event of run.events({ resumeAt: `${this.id}:0:0` })) {
        if (event.type === 'result') return resultOrTimeout(event.result, this.deps.timeoutS);
      }
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
    }
    throw new NetworkError({
      code: 'network_error',
      status: 0,
      message: 'The run stream ended before its result',
    });
  }

  /** Kills the run and its descendants if it still runs (`killed: 0` if it had ended). */
  kill(options: ProcessCallOptions = {}): Promise<KillResult> {
    return this.deps.calls.kill(this.id, options);
  }

  /** The run as the process list shows it: state, exit code, bytes written. */
  info(options: ProcessCallOptions = {}): Promise<ProcessInfo> {
    return this.deps.calls.get(this.id, options);
  }

  /** Its kept output from the given offsets (default: all that is kept), as text. */
  output(options: OutputOptions = {}): Promise<ProcessOutput> {
    return this.deps.calls.output(this.id, options);
  }

  /**
   * Its output as it comes, from its start (or the given offsets), until it and what it left
   * running let go of its pipes (`end`). Leaving the loop ends the read, never the run.
   */
  follow(options: OutputOptions = {}): AsyncGenerator<OutputEvent, void, undefined> {
    return this.deps.calls.follow(this.id, options);
  }

  /** Writes to its stdin (started with `stdin: true`); resolves once it took every byte. */
  writeStdin(
    data: string | Uint8Array,
    options: ProcessCallOptions & { close?: boolean } = {},
  ): Promise<StdinResult> {
    return this.deps.calls.writeStdin(this.id, data, options);
  }

  /** Closes its stdin: it reads the end of its input. */
  closeStdin(options: ProcessCallOptions = {}): Promise<StdinResult> {
    return this.deps.calls.closeStdin(this.id, options);
  }

  /**
   * Stops feeding `onStdout`/`onStderr` (closes the connection that carries them); the run
   * goes on, and `wait()` still gives its result.
   */
  disconnect(): void {
    this.feed?.stop();
  }
}

/**
 * Starts a run in the background: its events are read until it names its process, then its
 * connection is closed (the run goes on) or, with output callbacks, read on in the background
 * to feed them. Aborting `signal` before the handle is given kills the run.
 */
export async function startInBackground(
  run: RunStream,
  start: RunStart,
  deps: HandleDeps,
  options: {
    signal?: AbortSignal | undefined;
    onStdout?: ((data: string) => void) | undefined;
    onStderr?: ((data: string) => void) | undefined;
  },
): Promise<ProcessHandle> {
  const onAbort = (): void => run.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  const events = run.events(start);
  const early: ExecutionEvent[] = [];
  try {
    while (run.process === undefined) {
      const next = await events.next();
      if (next.done === true) {
        throw new NetworkError({ code: 'network_error', status: 0, message: 'No result' });
      }
      if (next.value.type === 'result') {
        throw new RunNotStartedError({
          code: 'run_not_started',
          status: 0,
          message: 'The run ended before its process started',
          result: next.value.result,
          ...run.context(),
        });
      }
      if (next.value.type !== 'started') early.push(next.value);
    }
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
  }
  const process = run.process;
  if (options.onStdout === undefined && options.onStderr === undefined) {
    await events.return(undefined); // the connection closes; the run goes on
    return new ProcessHandle(process, deps);
  }
  return new ProcessHandle(process, deps, feedOutput(run, events, early, options, deps.timeoutS));
}

/** Reads the rest of a run's events in the background, to feed its output callbacks. */
function feedOutput(
  run: RunStream,
  events: AsyncGenerator<ExecutionEvent, void, undefined>,
  early: ExecutionEvent[],
  options: { onStdout?: ((data: string) => void) | undefined; onStderr?: (data: string) => void },
  timeoutS: number | undefined,
): Feed {
  const deliver = (event: ExecutionEvent): void => {
    if (event.type === 'stdout') options.onStdout?.(event.data);
    else if (event.type === 'stderr') options.onStderr?.(event.data);
  };
  const result = (async () => {
    early.forEach(deliver);
    for await (const event of events) {
      if (event.type === 'result') return resultOrTimeout(event.result, timeoutS);
      deliver(event);
    }
    throw new NetworkError({ code: 'network_error', status: 0, message: 'No result' });
  })();
  // Nobody may ever wait: a failure is then not an unhandled rejection.
  void result.catch(() => undefined);
  const feed: Feed = {
    result,
    stopped: false,
    stop: () => {
      feed.stopped = true;
      run.abort(new Error('disconnected'), false);
    },
  };
  return feed;
}

/** `promise`, or an AbortedError as soon as `signal` aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(abortedError(signal.reason));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortedError(signal.reason));
    signal.addEventListener('abort', onAbort, { once: true });
    void promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
