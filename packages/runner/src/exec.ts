import { randomBytes } from 'node:crypto';
import { lstatSync, mkdirSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { constants } from 'node:os';
import { posix } from 'node:path';
import type { Readable } from 'node:stream';
import {
  cappedFilesWritten,
  TIMEOUT_EXIT_CODE,
  USER_CPU_PROCS,
  type RunResult,
} from '@sandbox/contract/run';
import { CODE_FILE_PREFIX, codeSource } from './code-file';
import { splitsCpu } from './cpu-group';
import { ChangeClock, changedSince } from './file-snapshot';
import { RunnerError, type RunSpec } from './protocol';
import { UsagePoller, type Timing } from './run-measure';
import { RunOutput, settledWithin, type RunSink } from './run-output';
import { Spawner, SPAWNER_BINARY, type RunStdin } from './spawner';
import { RUNNER_DIR } from './runner-dir';
import { hangUp, RUN_MARK, RunTimeout } from './run-stop';
import { transpileForNode } from './transpile';
import { needsOwnStart, Zygotes, type Zygote } from './zygotes';
import { lexicalDir, makeDirectories } from './workspace-path';

/*
 * Code runs (`exec` requests with `code`): transpiled, written to a file, run by a zygote or
 * through the spawner, measured. Command runs are never this runner's: the runner's front
 * serves them (front/run.go; ADR 34, ADR 47).
 */

export interface RunHandle {
  /** The run's leader process. */
  readonly pid: number;
  /** Stops reading the run's output (its process blocks on a full pipe) / starts again. */
  pauseOutput(): void;
  resumeOutput(): void;
  /**
   * Stops the run because its client went away: a hangup (SIGHUP) to its process group, as a
   * closing terminal would, so `nohup`ed and `setsid` background processes live on; what
   * remains of the run's own command is then killed.
   */
  cancel(): void;
  readonly done: Promise<RunResult>;
  /** Resolves once the run's output pipes closed (its background processes let go of them). */
  readonly closed: Promise<void>;
  /** The run's stdin, for a run started with `stdin`. */
  readonly input?: RunStdin;
}

/** After the main process exits, how long its last output may take to arrive. */
export const OUTPUT_GRACE_MS = 150;

/**
 * The run's working directory: created if missing (never through a symlink that leads out),
 * refused if it is not a directory.
 */
export async function workingDirectory(cwd: string): Promise<string> {
  const real = await makeDirectories(cwd, lexicalDir(cwd));
  if (!lstatSync(real).isDirectory()) {
    throw new RunnerError('invalid_path', `workingDir is not a directory: ${cwd}`, { path: cwd });
  }
  return real;
}

/** What a code run executes, and the code file written for it (removed after the run). */
interface CommandLine {
  argv: string[];
  codeFile: string;
}

/**
 * Writes code to a hidden file in `cwd`: transpiled by esbuild for node when that succeeds
 * within the run's timeout, else as it is, for tsx.
 */
async function writeCodeFile(
  code: string,
  cwd: string,
  runId: string,
  timeoutMs: number,
): Promise<CommandLine> {
  const name = `${CODE_FILE_PREFIX}${runId}`;
  // esbuild reads the workspace files the code imports: it gets no longer than the run.
  const plain = await settledWithin(transpileForNode(code, `${name}.mts`, cwd), timeoutMs);
  const file = posix.join(cwd, plain === undefined ? `${name}.mts` : `${name}.mjs`);
  await writeFile(file, plain ?? codeSource(code), { mode: 0o644 }).catch(async (err: unknown) => {
    await rm(file, { force: true }); // nothing half-written is left (a full disk)
    throw err;
  });
  const argv =
    plain === undefined
      ? ['/usr/local/bin/tsx', file]
      : [process.execPath, '--enable-source-maps', file];
  return { argv, codeFile: file };
}

/** A run's leader process: the spawner's child, or a zygote handed the run. */
interface Launched {
  pid: number;
  stdout: Readable;
  stderr: Readable;
  exited: Promise<LeaderExit>;
  input?: RunStdin;
}

/** How the leader ended, and what the run used as the spawner measured it when it was reaped. */
interface LeaderExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  timing: Timing;
}

interface LaunchOptions {
  cwd: string;
  env: Record<string, string>;
  runId: string;
  stdin: boolean;
}

/** Whether user processes run in a CPU group of their own (cpu-group.ts): fixed at birth. */
export const CPU_SPLIT = splitsCpu();

/** Starts runs by vfork in a small helper (ADR 21), installed beside the runner in the image. */
export const spawner = new Spawner(SPAWNER_BINARY, CPU_SPLIT ? USER_CPU_PROCS : '');

/** The run's environment: the runner's, the caller's, and the mark that finds its processes. */
function runEnv(options: LaunchOptions): Record<string, string> {
  // The mark lets a timeout find what the run started even after it left the tree.
  return { ...stringEnv(process.env), ...options.env, [RUN_MARK]: options.runId };
}

/**
 * Starts `argv` through the spawner, in a process group of its own, every process marked with
 * the run's id; inside the session's CPU group where the sandbox has one. The spawner measures
 * its CPU time and peak memory. Without the spawner (not a sandbox image) nothing runs.
 */
async function launch(argv: string[], options: LaunchOptions): Promise<Launched> {
  if (!spawner.available) {
    throw new RunnerError('service_unavailable', 'code runs need the run spawner of the image');
  }
  const run = await spawner.spawn(argv, {
    cwd: options.cwd,
    env: runEnv(options),
    enterCpuGroup: CPU_SPLIT,
    stdin: options.stdin,
  });
  const exited = run.exited.then(({ code, signal, cpuTimeMs, maxRssBytes }) => ({
    code,
    signal,
    timing: { cpuTimeMs, maxRssBytes },
  }));
  return {
    pid: run.pid,
    stdout: run.stdout,
    stderr: run.stderr,
    exited,
    ...(run.input === undefined ? {} : { input: run.input }),
  };
}

/** The pre-started Nodes of code runs (zygote.ts), one kept ready. */
export const zygotes = new Zygotes(spawner);

/**
 * A zygote for a code run (the ready one, or the one starting), unless the run sets what Node
 * reads only at start-up. Where the runner's CPU is its own (CPU_SPLIT), the next zygote
 * starts at once, beside the run, so that a run right after this one finds it ready; where
 * the run shares the container's CPU with the runner, once the run has ended.
 */
async function takeZygote(spec: RunSpec): Promise<Zygote | undefined> {
  // A zygote's stdin is the runner's pipe to it, not one the run's caller can write.
  if (needsOwnStart(spec.env) || spec.stdin === true) return undefined;
  const zygote = await zygotes.take();
  if (CPU_SPLIT) zygotes.prepare();
  return zygote;
}

/**
 * Gives the code run to a zygote: it takes the environment, working directory and arguments
 * `node file` would have had, marked like any run. What the run used is what the spawner
 * measured over the zygote's life, less what it had used when it was handed the run.
 */
function handToZygote(zygote: Zygote, file: string, options: LaunchOptions): Launched {
  const before = zygote.hand({ file, cwd: options.cwd, env: runEnv(options) });
  const { pid, stdout, stderr } = zygote.process;
  const exited = zygote.process.exited.then(({ code, signal, cpuTimeMs, maxRssBytes }) => ({
    code,
    signal,
    timing: { cpuTimeMs: Math.max(0, Math.round(cpuTimeMs - before)), maxRssBytes },
  }));
  return { pid, stdout, stderr, exited };
}

export function stringEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined) result[key] = value;
  return result;
}

/** A run under way: what its result is made of. */
interface StartedRun {
  leader: Launched;
  cwd: string;
  /** The kernel's change clock at the start (files changed since are the run's). */
  since: bigint;
  codeFile: string;
  started: bigint;
  output: RunOutput;
  usage: UsagePoller;
  timeout: RunTimeout;
}

/** The run's result, once its process has exited. */
function resultOf(run: StartedRun): Promise<RunResult> {
  return new Promise<RunResult>((resolve, reject) => {
    run.leader.exited.then((exit) => {
      run.timeout.clear();
      run.usage.stop();
      const executionTimeMs = Number((process.hrtime.bigint() - run.started) / 1_000_000n);
      collectResult(run, exit, executionTimeMs).then(resolve, reject);
    }, reject);
  });
}

/**
 * After the exit: waits for the last output (OUTPUT_GRACE_MS at most), removes the run's
 * files, and tells what it used and which files it created or changed.
 */
async function collectResult(
  run: StartedRun,
  exit: LeaderExit,
  executionTimeMs: number,
): Promise<RunResult> {
  await settledWithin(run.output.ended, OUTPUT_GRACE_MS);
  // Keep draining pipes held open by background processes, so they never block.
  run.output.finish();
  const filesWritten = await changedSince(run.cwd, run.since);
  await rm(run.codeFile, { force: true });
  const { timing } = exit;
  const { timedOut } = run.timeout;
  return {
    exitCode: timedOut ? TIMEOUT_EXIT_CODE : (exit.code ?? 128 + signalNumber(exit.signal)),
    executionTimeMs,
    memoryUsedBytes: Math.max(run.usage.peakRss, timing.maxRssBytes),
    cpuTimeMs: timing.cpuTimeMs,
    timedOut,
    filesWritten: cappedFilesWritten(filesWritten),
  };
}

/** Read at the start of every run: what the run changes is stamped at or after it. */
export const changeClock = new ChangeClock(RUNNER_DIR);

/**
 * Starts a code run, measured; reports the files it created or changed. Command runs are the
 * runner's front's (ADR 34, ADR 47): this runner never starts one.
 */
export async function startRun(spec: RunSpec, sink: RunSink): Promise<RunHandle> {
  const { code } = spec;
  if (code === undefined) {
    throw new RunnerError('internal_error', "command runs are served by the runner's front");
  }
  const cwd = await workingDirectory(spec.cwd);
  // The runner's directory is made for every run: the user may have removed it.
  mkdirSync(RUNNER_DIR, { recursive: true, mode: 0o700 });
  const runId = randomBytes(8).toString('hex');
  const since = await changeClock.read();
  const { argv, codeFile } = await writeCodeFile(code, cwd, runId, spec.timeoutMs);
  const started = process.hrtime.bigint();
  const options = { cwd, env: spec.env, runId, stdin: spec.stdin === true };
  const zygote = argv[0] === process.execPath ? await takeZygote(spec) : undefined;
  const leader =
    zygote !== undefined ? handToZygote(zygote, codeFile, options) : await launch(argv, options);
  // What background processes write to the run's pipes after it is kept, as its late output.
  const output = new RunOutput([leader.stdout, leader.stderr], sink, 'forward');
  const usage = new UsagePoller(leader.pid);
  const timeout = new RunTimeout(leader.pid, runId, spec.timeoutMs);
  const result = resultOf({ leader, cwd, since, codeFile, started, output, usage, timeout });
  return {
    pid: leader.pid,
    cancel: () => hangUp(leader.pid),
    // The next code run's Node starts once this run no longer needs the CPU, if not yet started.
    done: result.finally(() => zygotes.prepare()),
    closed: output.ended,
    pauseOutput: () => output.pause(),
    resumeOutput: () => output.resume(),
    ...(leader.input === undefined ? {} : { input: leader.input }),
  };
}

function signalNumber(signal: NodeJS.Signals | null): number {
  return signal === null ? 0 : (constants.signals[signal] ?? 1);
}
