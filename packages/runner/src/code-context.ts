import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import type { CellAnswer, CellRequest, ContextHello } from './context-host';
import { FrameSplitter } from './frames';
import { RunnerError, type ContextInfo } from './protocol';
import type { SpawnedRun } from './spawner';

/** A context's process, and the real directory it works in. */
export interface ContextProcess {
  run: SpawnedRun;
  dir: string;
  /** Whether it is a spare started ahead (contexts.ts), rather than one started for it. */
  spare: boolean;
}

/**
 * Starts a context's process (the spawner, as the sandbox user), or takes a spare unless
 * `fresh`; its working directory and environment are applied when it is greeted.
 */
export type StartContextProcess = (
  cwd: string,
  env: Record<string, string>,
  fresh: boolean,
) => Promise<ContextProcess>;

/**
 * How the runner speaks to a context's process: its first line (the token of its answers, and
 * for a spare its directory and environment), and each cell's line.
 */
export interface ContextDialect {
  hello(hello: ContextHello): string;
  cell(cell: CellRequest): string;
  /** An answer line (its mark taken off); undefined for one that is not an answer. */
  parse(frame: string): ParsedAnswer | undefined;
  /**
   * How the runner ends the process with what it started: at a cell's timeout (answered as
   * timed out, with `timedOutError`), a delete or a restart. None: the process alone is
   * killed, and it ends a cell at its timeout itself (killed only past a grace).
   */
  endTree?: (pid: number, token: string) => Promise<void>;
  /** The timed-out cell's error, when the runner ended the process at the timeout. */
  timedOutError?: CellAnswer['error'];
}

/** What an answer line says: the process is ready, or a cell's answer. */
export type ParsedAnswer = CellAnswer | { ev: 'ready' };

/** A code context's Node (context-host.ts): one JSON line each. */
export const NODE_DIALECT: ContextDialect = {
  hello: (hello) => `${JSON.stringify(hello)}\n`,
  cell: (cell) => `${JSON.stringify(cell)}\n`,
  parse: parseAnswer,
};

/** A cell under way: its output streams, and its answer once both pipes marked its end. */
export interface CellRun {
  stdout: PassThrough;
  stderr: PassThrough;
  /** Its answer; rejects with context_restarted when the process ended under it. */
  answer: Promise<CellAnswer>;
}

/**
 * How long a context's process may take to say it is ready: past it, it is ended and the start
 * fails (its environment may run something as it starts: BASH_ENV, NODE_OPTIONS). Within the
 * gateway's deadline for the call (FILE_OP_TIMEOUT_MS, 30 s), so that the caller hears why.
 */
export const CONTEXT_READY_TIMEOUT_MS = 20_000;

/** How long a cell may overrun its timeout before its process is killed (a stuck microtask loop). */
export const CELL_KILL_GRACE_MS = 2_000;

interface Current {
  run: CellRun;
  answer?: CellAnswer;
  stderrEnded: boolean;
  settle(answer: CellAnswer): void;
  fail(err: Error): void;
}

/**
 * One code context: a long-lived process of its own (context-host.ts), one cell at a time.
 * When its process ends (a cell killed it, or a kill-all), the cell under way fails with
 * context_restarted, and so does the next one if none was under way; a fresh process then
 * serves the cells after.
 */
export class CodeContext {
  private process: SpawnedRun | undefined;
  private token = '';
  private current: Current | undefined;
  /** The process ended while no cell ran: the next cell is told its state is gone. */
  private lostIdle = false;
  private closed = false;
  /** Counts starts and stops: a start overtaken by a stop or another start drops its process. */
  private generation = 0;
  /** A start under way: a cell waits for it. */
  private starting: Promise<void> | undefined;
  /** The runner ended the process at the cell's timeout (a dialect with `endTree`). */
  private timedOut = false;

  constructor(
    readonly info: ContextInfo,
    private readonly env: Record<string, string>,
    private readonly startProcess: StartContextProcess,
    private readonly dialect: ContextDialect = NODE_DIALECT,
    private readonly readyTimeoutMs = CONTEXT_READY_TIMEOUT_MS,
  ) {}

  get pid(): number {
    return this.process?.pid ?? 0;
  }

  get busy(): boolean {
    return this.current !== undefined;
  }

  /** Starts (or restarts) the process; resolves once it is ready for cells. */
  start(): Promise<void> {
    // What the last process started is ended before the next starts (a server's port).
    const ended = this.stop('the context was restarted');
    this.closed = false;
    this.lostIdle = false;
    const generation = this.generation;
    const starting = ended.then(() => this.startNow(generation));
    this.starting = starting;
    void starting
      .finally(() => {
        if (this.starting === starting) this.starting = undefined;
      })
      .catch(() => undefined);
    return starting;
  }

  private async startNow(generation: number, fresh = false): Promise<void> {
    const token = randomBytes(16).toString('hex');
    const { run: process, dir, spare } = await this.startProcess(this.info.cwd, this.env, fresh);
    if (generation !== this.generation) {
      kill(process.pid); // stopped or started again meanwhile
      throw new RunnerError('context_not_found', 'The context was deleted while it started');
    }
    this.token = token;
    this.process = process;
    const ready = this.follow(process);
    const hello = this.dialect.hello({ token, cwd: dir, env: this.env });
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      void this.end(process, token);
    }, this.readyTimeoutMs);
    await process.input?.write(Buffer.from(hello)).catch(() => undefined);
    try {
      await ready;
    } catch (err) {
      if (late) {
        const seconds = this.readyTimeoutMs / 1000;
        throw new RunnerError(
          'internal_error',
          `The context did not start within ${seconds} s: does its env run something as it starts (BASH_ENV, NODE_OPTIONS)?`,
        );
      }
      // A spare that died while it waited (a user's kill-all): a process of its own instead.
      if (!spare || generation !== this.generation) throw err;
      this.lostIdle = false;
      await this.startNow(generation, true);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Ends a process of this context, with what it started where the dialect says how. */
  private end(process: SpawnedRun, token: string): Promise<void> {
    if (this.dialect.endTree !== undefined) return this.dialect.endTree(process.pid, token);
    kill(process.pid);
    return Promise.resolve();
  }

  /** Runs a cell (its code plain JavaScript): its output and its answer. */
  async run(cell: CellRequest): Promise<CellRun> {
    if (this.current === undefined && this.starting !== undefined) {
      await this.starting.catch(() => undefined);
    }
    if (this.current !== undefined) {
      throw new RunnerError('conflict', 'A cell is already running in this context');
    }
    const process = this.process;
    if (process === undefined || this.lostIdle) {
      this.lostIdle = false;
      void this.start().catch(() => undefined);
      throw restarted('its process had ended');
    }
    let settle: (answer: CellAnswer) => void = () => undefined;
    let fail: (err: Error) => void = () => undefined;
    const answer = new Promise<CellAnswer>((resolve, reject) => {
      settle = resolve;
      fail = reject;
    });
    const run: CellRun = { stdout: new PassThrough(), stderr: new PassThrough(), answer };
    this.current = { run, stderrEnded: false, settle, fail };
    this.timedOut = false;
    const { endTree } = this.dialect;
    const guard =
      endTree === undefined
        ? setTimeout(() => kill(process.pid), cell.timeoutMs + CELL_KILL_GRACE_MS)
        : setTimeout(() => {
            this.timedOut = true;
            void endTree(process.pid, this.token);
          }, cell.timeoutMs);
    answer.finally(() => clearTimeout(guard)).catch(() => undefined);
    process.input?.write(Buffer.from(this.dialect.cell(cell))).catch(() => undefined);
    return run;
  }

  /**
   * Ends the process for good (the context is deleted, or the runner stops); resolves once
   * it and what it started (`endTree`) are ended.
   */
  stop(why = 'the context was deleted'): Promise<void> {
    this.closed = true;
    this.generation += 1;
    const current = this.current;
    this.current = undefined;
    if (current !== undefined) {
      current.run.stdout.end();
      current.run.stderr.end();
      current.fail(restarted(why));
    }
    const process = this.process;
    this.process = undefined;
    if (process === undefined) return Promise.resolve();
    process.input?.end().catch(() => undefined);
    return this.end(process, this.token);
  }

  /** Reads the process's pipes: output to the cell under way, answers to their waiters. */
  private follow(process: SpawnedRun): Promise<void> {
    const stdout = new FrameSplitter(this.token);
    const stderr = new FrameSplitter(this.token);
    let ready: () => void = () => undefined;
    let failed: (err: Error) => void = () => undefined;
    const isReady = new Promise<void>((resolve, reject) => {
      ready = resolve;
      failed = reject;
    });
    process.stdout.on('data', (chunk: Buffer) => {
      const { output, frames } = stdout.push(chunk);
      for (const bytes of output) this.current?.run.stdout.write(bytes);
      for (const frame of frames) {
        const message = this.dialect.parse(frame);
        if (message?.ev === 'ready') ready();
        else if (message !== undefined && this.current !== undefined) this.current.answer = message;
        this.finishIfDone();
      }
    });
    process.stderr.on('data', (chunk: Buffer) => {
      const { output, frames } = stderr.push(chunk);
      for (const bytes of output) this.current?.run.stderr.write(bytes);
      if (frames.length > 0 && this.current !== undefined) this.current.stderrEnded = true;
      this.finishIfDone();
    });
    process.exited
      .catch(() => undefined)
      .finally(() => {
        failed(new RunnerError('internal_error', 'The context could not start'));
        if (this.process !== process) return; // replaced or stopped
        this.process = undefined;
        this.ended();
      });
    return isReady;
  }

  private finishIfDone(): void {
    const current = this.current;
    if (current?.answer === undefined || !current.stderrEnded) return;
    this.current = undefined;
    current.run.stdout.end();
    current.run.stderr.end();
    current.settle(current.answer);
  }

  /** The process ended by itself: the cell under way (if any) is told, a fresh one starts. */
  private ended(): void {
    const current = this.current;
    this.current = undefined;
    if (this.closed) return;
    if (current === undefined) {
      this.lostIdle = true;
      return;
    }
    current.run.stdout.end();
    current.run.stderr.end();
    if (this.timedOut) {
      const error = this.dialect.timedOutError;
      current.settle({ ev: 'done', timedOut: true, results: [], ...(error ? { error } : {}) });
    } else {
      current.fail(restarted('the cell ended its process'));
    }
    void this.start().catch(() => {
      this.lostIdle = true;
    });
  }
}

/** An answer line; undefined for one that is not JSON (only the context could write it). */
function parseAnswer(frame: string): ParsedAnswer | undefined {
  try {
    return JSON.parse(frame) as CellAnswer | { ev: 'ready' };
  } catch {
    return undefined;
  }
}

function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

function restarted(why: string): RunnerError {
  return new RunnerError(
    'context_restarted',
    `The context was restarted (${why}): its variables are gone; the next cell runs in a fresh context`,
  );
}
