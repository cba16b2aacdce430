import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { existsSync } from 'node:fs';
import { posix } from 'node:path';
import type { Readable, Writable } from 'node:stream';

/** The pre-started Node of the next code run (zygote.ts), beside this module. */
const ZYGOTE_SCRIPT = posix.join(__dirname, 'zygote.js');
/** After a waiting zygote died (killed by a user's kill-all), how soon another is started. */
const RESPAWN_DELAY_MS = 200;

export type ZygoteProcess = ChildProcessByStdio<null, Readable, Readable>;

/** A started Node waiting for its run; `hand` gives it the run, once. */
export interface Zygote {
  pid: number;
  child: ZygoteProcess;
  hand(run: { file: string; cwd: string; env: Record<string, string>; timingFile: string }): void;
}

/**
 * Environment variables that Node (or the dynamic loader, or OpenSSL) reads only at start-up:
 * a run that sets one starts its own Node, so that they apply as the caller expects.
 */
const STARTUP_ENV = /^(NODE_|UV_|LD_|OPENSSL_|SSL_CERT_)/;

export function needsOwnStart(env: Record<string, string>): boolean {
  return Object.keys(env).some((key) => STARTUP_ENV.test(key));
}

/**
 * Keeps one zygote ready in the background: started when the runner starts and again after
 * each code run. Each serves one run; none ever serves two.
 */
export class Zygotes {
  private ready: Zygote | undefined;
  private respawn: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly script = ZYGOTE_SCRIPT,
    private readonly cwd = '/workspace',
  ) {}

  /** Whether zygotes can be used here (the compiled script is installed beside the runner). */
  get available(): boolean {
    return existsSync(this.script);
  }

  /** Starts the next zygote unless one is ready. */
  prepare(): void {
    if (this.ready !== undefined || this.closed || !this.available) return;
    this.ready = this.start();
  }

  /**
   * The ready zygote, for a run; undefined if none. The next one starts when this run has
   * ended (`prepare`): its start-up would otherwise take CPU from the run.
   */
  take(): Zygote | undefined {
    const zygote = this.ready;
    this.ready = undefined;
    return zygote;
  }

  /** The pid of the waiting zygote: the runner's, not a user's process. */
  waitingPid(): number | undefined {
    return this.ready?.pid;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.respawn);
    const zygote = this.ready;
    this.ready = undefined;
    zygote?.child.kill('SIGKILL');
  }

  private start(): Zygote | undefined {
    const child = spawn(process.execPath, ['--enable-source-maps', this.script], {
      cwd: this.cwd,
      env: process.env,
      detached: true, // its own process group, as every run's leader
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    }) as unknown as ZygoteProcess;
    const pid = child.pid;
    const control = child.stdio[3] as Writable | null;
    if (pid === undefined || control === null) {
      child.kill('SIGKILL');
      return undefined;
    }
    control.on('error', () => undefined); // it died first: its exit is what counts
    const zygote: Zygote = {
      pid,
      child,
      hand: (run) => control.end(`${JSON.stringify(run)}\n`),
    };
    child.on('error', () => undefined);
    child.once('exit', () => {
      if (this.ready !== zygote) return; // it was handed a run: the run's exit
      this.ready = undefined;
      this.respawn = setTimeout(() => this.prepare(), RESPAWN_DELAY_MS);
    });
    return zygote;
  }
}
