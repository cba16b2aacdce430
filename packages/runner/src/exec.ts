import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { lstat, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { constants } from 'node:os';
import { posix } from 'node:path';
import { cappedFilesWritten, TIMEOUT_EXIT_CODE, type RunResult } from '@sandbox/contract/run';
import { CODE_FILE_PREFIX, codeSource } from './code-file';
import {
  descendants,
  killAll,
  listProcesses,
  markedWith,
  runTree,
  stopThenKill,
  treesOf,
} from './processes';
import { RunnerError } from './protocol';
import { readTiming, TIME_FORMAT } from './run-measure';
import { transpileForNode } from './transpile';
import { lexicalDir, makeDirectories, WORKSPACE } from './workspace-path';

export interface RunSpec {
  command?: string;
  code?: string;
  env: Record<string, string>;
  cwd: string;
  timeoutMs: number;
}

/** Where output goes; `false` from a write means "slow down" until `onDrain` calls back. */
export interface RunSink {
  stdout(chunk: Buffer): boolean;
  stderr(chunk: Buffer): boolean;
  onDrain(resume: () => void): void;
}

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
}

const MEMORY_POLL_MS = 50;
/** After the main process exits, how long its last output may take to arrive. */
const OUTPUT_GRACE_MS = 150;
/** After a hangup, how long the command gets before it is killed. */
const HANGUP_GRACE_MS = 500;
const MAX_SCANNED = 20_000;
const RUNNER_DIR = '/tmp/.sandbox-runner';
/** The environment variable that marks every process of a run (and what they start). */
const RUN_MARK = 'SANDBOX_RUN_ID';

type Snapshot = Map<string, number>;

/** mtimes of files under `dir` (node_modules left out), to tell what a run wrote. */
async function snapshot(dir: string): Promise<Snapshot> {
  const seen: Snapshot = new Map();
  const queue = [dir];
  while (queue.length > 0 && seen.size < MAX_SCANNED) {
    const current = queue.shift() as string;
    for (const entry of await readdir(current, { withFileTypes: true }).catch(() => [])) {
      const full = posix.join(current, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules') queue.push(full);
      } else if (entry.isFile() && !entry.name.startsWith(CODE_FILE_PREFIX)) {
        const info = await lstat(full).catch(() => undefined);
        if (info !== undefined) seen.set(full, info.mtimeMs);
      }
    }
  }
  return seen;
}

function changed(before: Snapshot, after: Snapshot): string[] {
  const paths: string[] = [];
  for (const [path, mtime] of after) {
    if (before.get(path) !== mtime) paths.push(posix.relative(WORKSPACE, path));
  }
  return paths.sort();
}

/**
 * The run's working directory: created if missing (never through a symlink that leads out),
 * refused if it is not a directory.
 */
export async function workingDirectory(cwd: string): Promise<string> {
  const real = await makeDirectories(cwd, lexicalDir(cwd));
  if (!(await lstat(real)).isDirectory()) {
    throw new RunnerError('invalid_path', `workingDir is not a directory: ${cwd}`, { path: cwd });
  }
  return real;
}

/** Starts a run of a command or code, measured; reports the files it created or changed. */
export async function startRun(spec: RunSpec, sink: RunSink): Promise<RunHandle> {
  const cwd = await workingDirectory(spec.cwd);
  const before = await snapshot(cwd);
  await mkdir(RUNNER_DIR, { recursive: true, mode: 0o700 });
  const id = randomBytes(8).toString('hex');
  const timingFile = posix.join(RUNNER_DIR, `timing-${id}`);
  let codeFile: string | undefined;
  let argv: string[];
  if (spec.code !== undefined) {
    const name = `${CODE_FILE_PREFIX}${id}`;
    // esbuild reads the workspace files the code imports: it gets no longer than the run.
    const plain = await Promise.race([
      transpileForNode(spec.code, `${name}.mts`, cwd),
      new Promise<undefined>((resolve) => {
        setTimeout(() => resolve(undefined), spec.timeoutMs).unref();
      }),
    ]);
    const file = posix.join(cwd, plain === undefined ? `${name}.mts` : `${name}.mjs`);
    await writeFile(file, plain ?? codeSource(spec.code), { mode: 0o644 }).catch(
      async (err: unknown) => {
        await rm(file, { force: true }); // nothing half-written is left (a full disk)
        throw err;
      },
    );
    codeFile = file;
    argv =
      plain === undefined
        ? ['/usr/local/bin/tsx', codeFile]
        : [process.execPath, '--enable-source-maps', codeFile];
  } else {
    argv = ['/bin/bash', '-c', spec.command ?? ''];
  }

  const started = process.hrtime.bigint();
  const child = spawn('/usr/bin/time', ['-f', TIME_FORMAT, '-o', timingFile, ...argv], {
    cwd,
    // The mark lets a timeout find what the run started even after it left the tree.
    env: { ...process.env, ...spec.env, [RUN_MARK]: id },
    detached: true, // its own process group, so that the tree can be killed
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const leader = child.pid;
  if (leader === undefined) throw new RunnerError('internal_error', 'Could not start the process');

  let finished = false;
  // Output flows unless the runner's own output is full or the agent asked for a pause.
  let outputFull = false;
  let pausedByAgent = false;
  const applyFlow = (): void => {
    for (const stream of [child.stdout, child.stderr]) {
      if (finished)
        stream.resume(); // after the run: drain and drop
      else if (outputFull || pausedByAgent) stream.pause();
      else stream.resume();
    }
  };
  const forward = (stream: NodeJS.ReadableStream, write: (chunk: Buffer) => boolean): void => {
    stream.on('data', (chunk: Buffer) => {
      if (finished) return; // late output of background processes is dropped
      if (!write(chunk) && !outputFull) {
        outputFull = true;
        applyFlow();
        sink.onDrain(() => {
          outputFull = false;
          applyFlow();
        });
      }
    });
  };
  forward(child.stdout, (c) => sink.stdout(c));
  forward(child.stderr, (c) => sink.stderr(c));
  // Registered now: the pipes may close before the process's exit is reported.
  const outputEnded = Promise.all(
    [child.stdout, child.stderr].map((stream) => new Promise<void>((ok) => stream.once('end', ok))),
  );

  let peakRss = 0;
  let lastCpuMs = 0;
  const poll = async (): Promise<void> => {
    const tree = descendants(await listProcesses(), leader);
    peakRss = Math.max(
      peakRss,
      tree.reduce((sum, p) => sum + p.rss, 0),
    );
    lastCpuMs = Math.max(
      lastCpuMs,
      tree.reduce((sum, p) => sum + p.cpuMs, 0),
    );
  };
  const poller = setInterval(() => void poll().catch(() => undefined), MEMORY_POLL_MS);
  void poll().catch(() => undefined);

  let timedOut = false;
  const killTree = async (): Promise<void> => {
    await stopThenKill(async (all, stopped) => [
      ...runTree(all, leader).map((p) => p.pid),
      ...treesOf(all, [], stopped),
      ...(await markedWith(all, `${RUN_MARK}=${id}`)),
    ]);
  };
  const timer = setTimeout(() => {
    timedOut = true;
    // A failure here leaves the run to the agent's guard, which restarts the runner.
    killTree().catch((err: unknown) =>
      process.stderr.write(`killing a timed-out run: ${String(err)}\n`),
    );
  }, spec.timeoutMs);

  const done = new Promise<RunResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      clearInterval(poller);
      const executionTimeMs = Number((process.hrtime.bigint() - started) / 1_000_000n);
      const grace = new Promise<void>((ok) => setTimeout(ok, OUTPUT_GRACE_MS));
      void Promise.race([outputEnded, grace])
        .then(async () => {
          finished = true;
          // Keep draining pipes held open by background processes, so they never block.
          applyFlow();
          const timing = await readTiming(timingFile);
          await rm(timingFile, { force: true });
          if (codeFile !== undefined) await rm(codeFile, { force: true });
          const after = await snapshot(cwd);
          const filesWritten = changed(before, after);
          resolve({
            exitCode: timedOut ? TIMEOUT_EXIT_CODE : (code ?? 128 + signalNumber(signal)),
            executionTimeMs,
            memoryUsedBytes: Math.max(peakRss, timing?.maxRssBytes ?? 0),
            cpuTimeMs: timing?.cpuTimeMs ?? Math.round(lastCpuMs),
            timedOut,
            filesWritten: cappedFilesWritten(filesWritten),
          });
        })
        .catch(reject);
    });
  });
  const hangUp = (): void => {
    try {
      process.kill(-leader, 'SIGHUP');
    } catch {
      return; // the group is gone
    }
    setTimeout(() => {
      void listProcesses().then((all) => {
        // The leader (time) and the command it runs; not their background children.
        const command = all.filter((p) => p.pid === leader || p.ppid === leader);
        killAll(command.map((p) => p.pid));
      });
    }, HANGUP_GRACE_MS).unref();
  };
  return {
    pid: leader,
    cancel: hangUp,
    done,
    pauseOutput: () => {
      pausedByAgent = true;
      applyFlow();
    },
    resumeOutput: () => {
      pausedByAgent = false;
      applyFlow();
    },
  };
}

function signalNumber(signal: NodeJS.Signals | null): number {
  return signal === null ? 0 : (constants.signals[signal] ?? 1);
}
