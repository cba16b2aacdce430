import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { posix } from 'node:path';
import { zygoteWarmMarker } from './runner-dir';
import type { Spawner, SpawnedRun } from './spawner';

/** The pre-started Node of the next code run (zygote.ts), beside this module. */
const ZYGOTE_SCRIPT = posix.join(__dirname, 'zygote.js');
/** After a waiting zygote died (killed by a user's kill-all), how soon another is started. */
const RESPAWN_DELAY_MS = 200;
/** How often `settled` looks for the zygote's sign that it is warm. */
const SETTLED_POLL_MS = 20;
/**
 * How long a code run waits for a zygote that is starting rather than start a Node of its own:
 * a zygote starts on the runner's CPU, a Node of the run's own under the session's limit
 * (0.25 CPU by default, four times slower), so waiting for one half started is the quicker.
 */
export const STARTING_WAIT_MS = 2_000;

/** What a zygote is handed: the run it becomes. */
export interface ZygoteRun {
  file: string;
  cwd: string;
  env: Record<string, string>;
}

/** A started Node waiting for its run; `hand` gives it the run, once. */
export interface Zygote {
  pid: number;
  /** Its process, as the spawner started it: output, exit and usage. */
  process: SpawnedRun;
  /** Whether it ended (a waiting zygote can be killed). */
  readonly ended: boolean;
  /** Hands it its run; returns the CPU time it had used until then (its start), ms. */
  hand(run: ZygoteRun): number;
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
 * each code run. Each serves one run; none ever serves two. Zygotes are started by the
 * spawner, which reports the usage of their whole life when they exit (a run's is that less
 * what the zygote had used when it was handed the run), and keeps them out of the user's
 * reach while they wait (native/spawner.c, "Identities"): outside the session's CPU group,
 * they must not be a way around it.
 */
export class Zygotes {
  private ready: Zygote | undefined;
  /** The zygote being started, until it is ready (or failed to start). */
  private starting: Promise<Zygote | undefined> | undefined;
  private respawn: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly spawner: Pick<Spawner, 'available' | 'spawn'>,
    private readonly script = ZYGOTE_SCRIPT,
    private readonly cwd = '/workspace',
    private readonly running: (pid: number) => boolean = processRunning,
  ) {}

  /** Whether zygotes can be used here (the script and the spawner are installed). */
  get available(): boolean {
    return this.spawner.available && existsSync(this.script);
  }

  /** Starts the next zygote unless one is ready or starting. */
  prepare(): void {
    if (this.ready !== undefined || this.starting !== undefined || this.closed || !this.available)
      return;
    this.starting = this.start().then(
      (zygote) => {
        this.starting = undefined;
        if (this.closed) {
          zygote.process.input?.end().catch(() => undefined);
          return undefined;
        }
        this.ready = zygote;
        return zygote;
      },
      () => {
        this.starting = undefined;
        return undefined;
      },
    );
  }

  /**
   * The ready zygote, for a run, or the one starting once it is ready (waited for at most
   * `waitMs`); undefined if none, or if it died waiting. The caller starts the next one
   * (`prepare`) when the run's CPU allows: at once where the runner's CPU is its own.
   */
  async take(waitMs = STARTING_WAIT_MS): Promise<Zygote | undefined> {
    if (this.ready === undefined && this.starting !== undefined) {
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), waitMs);
      });
      await Promise.race([this.starting, bound]).finally(() => clearTimeout(timer));
    }
    const zygote = this.ready;
    this.ready = undefined;
    // Killed (the user's `kill -KILL -1`) but its exit not yet reported: the run is not its.
    if (zygote === undefined || zygote.ended || !this.running(zygote.pid)) return undefined;
    return zygote;
  }

  /**
   * Resolves once no zygote is starting and the ready one is warm (its sign is there), or
   * after `timeoutMs`: a sandbox frozen now (a warm pool member) holds no start-up half done,
   * whose CPU its first user would pay after the thaw.
   */
  async settled(timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    // stat, not access (existsSync): the runner's real uid is root, its effective one the user's
    // (spawner.c, "Identities"), and access() asks as the real one.
    const signed = (pid: number) => {
      try {
        return statSync(zygoteWarmMarker(pid), { throwIfNoEntry: false }) !== undefined;
      } catch {
        return false; // unreadable: waited for no longer than the bound
      }
    };
    const warm = () =>
      this.starting === undefined && (this.ready === undefined || signed(this.ready.pid));
    while (!warm() && Date.now() < deadline) await sleep(SETTLED_POLL_MS);
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
    // Its stdin ends: a waiting zygote exits.
    zygote?.process.input?.end().catch(() => undefined);
  }

  private async start(): Promise<Zygote> {
    const process = await this.spawner.spawn(
      [globalThis.process.execPath, '--enable-source-maps', this.script],
      { cwd: this.cwd, env: zygoteEnv(), enterCpuGroup: false, stdin: true, zygote: true },
    );
    let ended = false;
    const zygote: Zygote = {
      pid: process.pid,
      process,
      get ended() {
        return ended;
      },
      hand: (run) => {
        const used = cpuTimeMs(process.pid);
        const input = process.input;
        input
          ?.write(Buffer.from(`${JSON.stringify(run)}\n`))
          .then(() => input.end())
          .catch(() => undefined);
        return used;
      },
    };
    process.exited
      .catch(() => undefined)
      .finally(() => {
        ended = true;
        try {
          rmSync(zygoteWarmMarker(process.pid), { force: true });
        } catch {
          // The runner's own directory: a sign left there names a pid that is gone.
        }
        if (this.ready !== zygote) return; // it was handed a run: the run's exit
        this.ready = undefined;
        if (!this.closed) this.respawn = setTimeout(() => this.prepare(), RESPAWN_DELAY_MS);
      });
    return zygote;
  }
}

/** Whether process `pid` runs: it exists, and is not a zombie its parent has yet to reap. */
export function processRunning(pid: number, procRoot = '/proc'): boolean {
  try {
    const stat = readFileSync(`${procRoot}/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** The runner's environment, as a zygote starts with (its run sets its own). */
function zygoteEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
  return env;
}

/**
 * The CPU time process `pid` has used, ms: the sum over its threads of the scheduler's
 * nanosecond count, which is what the kernel's rusage of the process adds up to when it exits.
 * Clock ticks of /proc/PID/stat where schedstat is missing.
 */
export function cpuTimeMs(pid: number, procRoot = '/proc'): number {
  try {
    let ns = 0;
    for (const task of readdirSync(`${procRoot}/${pid}/task`)) {
      const text = readFileSync(`${procRoot}/${pid}/task/${task}/schedstat`, 'utf8');
      ns += Number(text.split(' ')[0]);
    }
    if (Number.isFinite(ns) && ns > 0) return ns / 1e6;
  } catch {
    // no schedstat: the ticks below
  }
  const fields = statFields(pid, procRoot);
  return fields === undefined ? 0 : (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * The CPU time of the children `pid` has waited for, ms (a shell's commands' programs): the
 * kernel counts it in clock ticks of 10 ms.
 */
export function reapedChildrenCpuMs(pid: number, procRoot = '/proc'): number {
  const fields = statFields(pid, procRoot);
  return fields === undefined ? 0 : (Number(fields[13]) + Number(fields[14])) * 10;
}

/** The fields of /proc/PID/stat after the command's name (undefined: the process is gone). */
function statFields(pid: number, procRoot: string): string[] | undefined {
  try {
    const stat = readFileSync(`${procRoot}/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}
