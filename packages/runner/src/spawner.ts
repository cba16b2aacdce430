import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { existsSync } from 'node:fs';
import { constants } from 'node:os';
import { posix } from 'node:path';
import { Readable, type Writable } from 'node:stream';
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
}

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
      closedPipes: 0,
      exited: false,
      exit: { resolve: () => undefined, reject: () => undefined },
    };
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
    return { pid, stdout, stderr, exited };
  }

  close(): void {
    this.helper?.stdin.end();
    this.helper = undefined;
  }

  private ensureHelper(): HelperProcess {
    if (this.helper !== undefined) return this.helper;
    const helper = spawn(this.binary, [this.cpuProcs], {
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
    } else if (type === 'x') {
      run.exit.resolve(exitOf(payload));
      run.exited = true;
    }
    // The helper forgets a run at the same point: its id is not reused anyway.
    if (run.exited && run.closedPipes === 2) this.runs.delete(id);
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

/** One frame to the helper. */
function frame(type: 'S' | 'P' | 'R', id: number, payload: Buffer = Buffer.alloc(0)): Buffer {
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
  const counts = Buffer.alloc(9);
  counts.writeUInt8(options.enterCpuGroup ? 1 : 0, 0);
  counts.writeUInt32LE(argv.length, 1);
  counts.writeUInt32LE(env.length, 5);
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
