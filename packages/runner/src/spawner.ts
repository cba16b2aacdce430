import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { existsSync } from 'node:fs';
import { constants } from 'node:os';
import { posix } from 'node:path';
import { Readable, type Writable } from 'node:stream';
import { runUidArgument } from './identity';
import { RunnerError } from './protocol';

/*
 * The runner's side of native/spawner.c: a small helper that starts runs by vfork + exec, so
 * that no run pays a fork of the runner's Node, and reports each run's output, exit and usage
 * (what GNU time reported before). Its frames are described there.
 */

/** The compiled helper, installed beside the runner's modules. */
export const SPAWNER_BINARY = posix.join(__dirname, 'run-spawner');

const HEADER_BYTES = 9; // u32 length, u8 type, u32 run id

export interface SpawnOptions {
  cwd: string;
  env: Record<string, string>;
  /** Whether the run enters the session's CPU group before it becomes `argv`. */
  enterCpuGroup: boolean;
  /** stdin a pipe written through `SpawnedRun.input` (else /dev/null). */
  stdin?: boolean;
  /** A pseudo-terminal of this size as stdin, stdout and stderr (its output is `stdout`). */
  terminal?: TerminalSize;
  /** A zygote (zygotes.ts): it becomes the sandbox user itself, when handed its run. */
  zygote?: boolean;
}

export interface TerminalSize {
  cols: number;
  rows: number;
}

/** Input for a run started with `stdin` or `terminal`. */
export interface RunStdin {
  /** Resolves once the run's stdin or terminal took the bytes (one write at a time). */
  write(data: Buffer): Promise<void>;
  /** Closes the run's stdin (a terminal's input ends with ^D, typed). */
  end(): Promise<void>;
  /** A terminal's new size. */
  resize(size: TerminalSize): void;
}

/** How a spawned run ended, and what it used (its own and its waited-for descendants'). */
export interface SpawnExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  cpuTimeMs: number;
  maxRssBytes: number;
}

export interface SpawnedRun {
  pid: number;
  stdout: Readable;
  stderr: Readable;
  /** For a run started with `stdin` or `terminal`. */
  input?: RunStdin;
  /** Rejects if the helper died first (the run's status is then unknown). */
  exited: Promise<SpawnExit>;
}

/**
 * One pipe of a run, relayed by the helper: when the reader stops taking it, the helper
 * stops reading the run's pipes, so the run blocks on a full pipe as it would on its own.
 */
class RelayedPipe extends Readable {
  full = false;

  constructor(private readonly flowChanged: () => void) {
    super();
  }

  deliver(chunk: Buffer): void {
    if (!this.push(chunk) && !this.full) {
      this.full = true;
      this.flowChanged();
    }
  }

  override _read(): void {
    if (!this.full) return;
    this.full = false;
    this.flowChanged();
  }
}

interface LiveRun {
  pipes: [RelayedPipe, RelayedPipe];
  paused: boolean;
  closedPipes: number;
  exited: boolean;
  exit: { resolve(exit: SpawnExit): void; reject(err: Error): void };
  /** Input sent to the helper, each waiting for its 'a'. */
  inputs: Array<() => void>;
}

/** Largest input frame: a larger write goes as several, each taken before the next. */
const MAX_INPUT_FRAME = 64 * 1024;

interface PendingStart {
  resolve(pid: number): void;
  reject(err: Error): void;
}

type HelperProcess = ChildProcessByStdio<Writable, Readable, null>;

/** The helper, started on first use and again after it died. */
export class Spawner {
  private helper: HelperProcess | undefined;
  private nextId = 1;
  private readonly starting = new Map<number, PendingStart>();
  private readonly runs = new Map<number, LiveRun>();
  private received = Buffer.alloc(0);

  constructor(
    private readonly binary = SPAWNER_BINARY,
    /** The session's cgroup.procs, for runs that enter the CPU group. */
    private readonly cpuProcs = '',
  ) {}

  /** Whether the helper is installed here (it is in the sandbox image). */
  get available(): boolean {
    return existsSync(this.binary);
  }

  /** The helper's pid: the runner's, not a user's process. */
  get pid(): number | undefined {
    return this.helper?.pid;
  }

  /** Starts the helper now, so that the first run does not wait for it. */
  prepare(): void {
    if (this.available) this.ensureHelper();
  }

  async spawn(argv: readonly string[], options: SpawnOptions): Promise<SpawnedRun> {
    const request = startRequest(argv, options);
    const helper = this.ensureHelper();
    const id = this.nextId++;
    // Known before the start is sent: its output may come in the same read as its pid.
    const run: LiveRun = {
      pipes: [
        new RelayedPipe(() => this.flowChanged(id)),
        new RelayedPipe(() => this.flowChanged(id)),
      ],
      paused: false,
      // A terminal has one output: its stderr is over from the start.
      closedPipes: options.terminal === undefined ? 0 : 1,
      exited: false,
      exit: { resolve: () => undefined, reject: () => undefined },
      inputs: [],
    };
    if (options.terminal !== undefined) run.pipes[1].push(null);
    const exited = new Promise<SpawnExit>((resolve, reject) => {
      run.exit = { resolve, reject };
    });
    exited.catch(() => undefined); // a failed start rejects the spawn instead
    this.runs.set(id, run);
    const pid = await new Promise<number>((resolve, reject) => {
      this.starting.set(id, { resolve, reject });
      helper.stdin.write(frame('S', id, request));
    }).catch((err: unknown) => {
      this.runs.delete(id);
      throw err;
    });
    const [stdout, stderr] = run.pipes;
    const piped = options.stdin === true || options.terminal !== undefined;
    return { pid, stdout, stderr, exited, ...(piped ? { input: this.inputOf(id, run) } : {}) };
  }

  private inputOf(id: number, run: LiveRun): RunStdin {
    // Chained: one frame at a time in flight, in order, each after the last was taken.
    let last = Promise.resolve();
    const send = (data: Buffer): Promise<void> => {
      last = last.then(
        () =>
          new Promise<void>((taken) => {
            if (this.helper === undefined || !this.runs.has(id)) return taken();
            run.inputs.push(taken);
            this.helper.stdin.write(frame('I', id, data));
          }),
      );
      return last;
    };
    return {
      write: async (data) => {
        for (let at = 0; at < data.length; at += MAX_INPUT_FRAME) {
          await send(data.subarray(at, at + MAX_INPUT_FRAME));
        }
      },
      end: () => send(Buffer.alloc(0)),
      resize: ({ cols, rows }) => {
        const size = Buffer.alloc(4);
        size.writeUInt16LE(clampSize(cols), 0);
        size.writeUInt16LE(clampSize(rows), 2);
        this.helper?.stdin.write(frame('W', id, size));
      },
    };
  }

  close(): void {
    this.helper?.stdin.end();
    this.helper = undefined;
  }

  private ensureHelper(): HelperProcess {
    if (this.helper !== undefined) return this.helper;
    const helper = spawn(this.binary, [this.cpuProcs, runUidArgument()], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    helper.stdin.on('error', () => undefined); // it died: its exit is what counts
    helper.stdout.on('data', (chunk: Buffer) => this.receive(chunk));
    helper.on('error', () => undefined);
    helper.once('close', () => this.helperGone(helper));
    this.helper = helper;
    this.received = Buffer.alloc(0);
    return helper;
  }

  /** The helper died (a user's kill-all can do that): what it ran is no longer known. */
  private helperGone(helper: HelperProcess): void {
    if (this.helper === helper) this.helper = undefined;
    const gone = () =>
      new RunnerError('internal_error', "The sandbox's process starter stopped during the run");
    for (const start of this.starting.values()) start.reject(gone());
    this.starting.clear();
    for (const run of this.runs.values()) {
      for (const pipe of run.pipes) pipe.push(null);
      run.exit.reject(gone());
      for (const taken of run.inputs.splice(0)) taken();
    }
    this.runs.clear();
  }

  private flowChanged(id: number): void {
    const run = this.runs.get(id);
    if (run === undefined) return;
    const paused = run.pipes.some((pipe) => pipe.full);
    if (paused === run.paused) return;
    run.paused = paused;
    this.helper?.stdin.write(frame(paused ? 'P' : 'R', id));
  }

  private receive(chunk: Buffer): void {
    let data = this.received.length === 0 ? chunk : Buffer.concat([this.received, chunk]);
    while (data.length >= 4) {
      const length = data.readUInt32LE(0);
      if (data.length < 4 + length) break;
      this.handle(
        String.fromCharCode(data[4] ?? 0),
        data.readUInt32LE(5),
        data.subarray(HEADER_BYTES, 4 + length),
      );
      data = data.subarray(4 + length);
    }
    this.received = data.length === 0 ? Buffer.alloc(0) : Buffer.from(data);
  }

  private handle(type: string, id: number, payload: Buffer): void {
    if (type === 's') return this.started(id, payload.readInt32LE(0));
    const run = this.runs.get(id);
    if (run === undefined) return;
    if (type === 'o' || type === 'e') {
      run.pipes[type === 'o' ? 0 : 1].deliver(Buffer.from(payload));
    } else if (type === 'c') {
      run.pipes[payload[0] === 1 ? 0 : 1].push(null);
      run.closedPipes += 1;
    } else if (type === 'a') {
      run.inputs.shift()?.();
    } else if (type === 'x') {
      run.exit.resolve(exitOf(payload));
      run.exited = true;
    }
    // The helper forgets a run at the same point: its id is not reused anyway.
    if (run.exited && run.closedPipes === 2) {
      this.runs.delete(id);
      for (const taken of run.inputs.splice(0)) taken(); // nothing will take it any more
    }
  }

  private started(id: number, result: number): void {
    const start = this.starting.get(id);
    this.starting.delete(id);
    if (result > 0) start?.resolve(result);
    else
      start?.reject(
        new RunnerError('internal_error', `Could not start the process (errno ${-result})`),
      );
  }
}

/** A terminal dimension as the kernel takes it (1 to 65535). */
function clampSize(n: number): number {
  return Math.min(0xffff, Math.max(1, Math.floor(Number.isFinite(n) ? n : 1)));
}

/** One frame to the helper. */
function frame(
  type: 'S' | 'P' | 'R' | 'I' | 'W',
  id: number,
  payload: Buffer = Buffer.alloc(0),
): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt32LE(HEADER_BYTES - 4 + payload.length, 0);
  header.write(type, 4, 'latin1');
  header.writeUInt32LE(id, 5);
  return Buffer.concat([header, payload]);
}

/** A start's payload: flags, counts, then the NUL-terminated working directory, argv and env. */
function startRequest(argv: readonly string[], options: SpawnOptions): Buffer {
  const env = Object.entries(options.env).map(([key, value]) => `${key}=${value}`);
  const strings = [options.cwd, ...argv, ...env];
  if (strings.some((s) => s.includes('\0'))) {
    throw new RunnerError(
      'invalid_request',
      'The command, its environment and working directory cannot contain NUL bytes',
    );
  }
  const { terminal } = options;
  const counts = Buffer.alloc(terminal === undefined ? 9 : 13);
  const flags =
    (options.enterCpuGroup ? 1 : 0) |
    (options.stdin === true ? 2 : 0) |
    (terminal ? 4 : 0) |
    (options.zygote === true ? 8 : 0);
  counts.writeUInt8(flags, 0);
  counts.writeUInt32LE(argv.length, 1);
  counts.writeUInt32LE(env.length, 5);
  if (terminal !== undefined) {
    counts.writeUInt16LE(clampSize(terminal.cols), 9);
    counts.writeUInt16LE(clampSize(terminal.rows), 11);
  }
  return Buffer.concat([counts, Buffer.from(`${strings.join('\0')}\0`)]);
}

/** An exit event: the raw wait status, CPU microseconds and peak RSS in KiB. */
function exitOf(payload: Buffer): SpawnExit {
  const status = payload.readInt32LE(0);
  const cpuTimeMs = Math.round(Number(payload.readBigUInt64LE(4)) / 1000);
  const maxRssBytes = Number(payload.readBigUInt64LE(12)) * 1024;
  const termSignal = status & 0x7f;
  if (termSignal === 0) return { code: (status >> 8) & 0xff, signal: null, cpuTimeMs, maxRssBytes };
  return { code: null, signal: signalName(termSignal), cpuTimeMs, maxRssBytes };
}

function signalName(number: number): NodeJS.Signals {
  const entry = Object.entries(constants.signals).find(([, value]) => value === number);
  return (entry?.[0] ?? 'SIGKILL') as NodeJS.Signals;
}
