import { readdir } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { startRun, workingDirectory, type RunHandle } from './exec';
import { missingPackages } from './imports';
import { extractBundle } from './packages';
import { asDiskFull, listFiles, openFile, writeFiles } from './files';
import {
  findKeepAlive,
  listProcesses,
  processNotFound,
  stopThenKill,
  treesOf,
  userProcesses,
  type ProcessInfo,
} from './processes';
import { RunnerError, type RunnerEvent, type RunnerRequest } from './protocol';
import { asPathError, WORKSPACE } from './workspace-path';

const MAX_COUNTED_FILES = 1_000_000;

/** A request whose output the agent can hold and resume, or stop. */
interface Flow {
  pause(): void;
  resume(): void;
  cancel(): void;
}

async function countFiles(root: string): Promise<number> {
  let count = 0;
  const queue = [root];
  while (queue.length > 0 && count < MAX_COUNTED_FILES) {
    const current = queue.shift() as string;
    for (const entry of await readdir(current, { withFileTypes: true }).catch(() => [])) {
      if (entry.isDirectory()) queue.push(`${current}/${entry.name}`);
      else if (entry.isFile()) count += 1;
    }
  }
  return count;
}

/**
 * Serves the runner protocol on `input`/`output` until `input` ends. Requests run
 * concurrently; output flow control follows `output`'s backpressure.
 */
export async function serve(input: Readable, output: Writable): Promise<void> {
  const runs = new Map<number, RunHandle>();
  /** Requests whose output the agent can hold and resume, or stop: runs and file reads. */
  const flows = new Map<number, Flow>();
  /** Runs being prepared (files snapshot, transpile), and whether a cancel came meanwhile. */
  const starting = new Map<number, boolean>();
  const drainWaiters: (() => void)[] = [];
  output.on('drain', () => drainWaiters.splice(0).forEach((resume) => resume()));
  const emit = (event: RunnerEvent): boolean => output.write(`${JSON.stringify(event)}\n`);
  const fail = async (id: number, cause: unknown): Promise<void> => {
    const err = asPathError(await asDiskFull(cause).catch(() => cause));
    if (err instanceof RunnerError) {
      emit({
        id,
        ev: 'error',
        code: err.code,
        message: err.message,
        ...(err.details ? { details: err.details } : {}),
      });
    } else {
      const message = err instanceof Error ? err.message : String(err);
      emit({ id, ev: 'error', code: 'internal_error', message });
    }
  };
  const infrastructure = new Set([process.pid]);
  const keepAlive = await findKeepAlive(await listProcesses());
  if (keepAlive !== undefined) infrastructure.add(keepAlive);

  /** The runner's own helpers (its children that are not runs, e.g. esbuild) and the rest. */
  function infrastructureOf(all: readonly { pid: number; ppid: number }[]): Set<number> {
    const leaders = new Set([...runs.values()].map((run) => run.pid));
    const helpers = all.filter((p) => p.ppid === process.pid && !leaders.has(p.pid));
    return new Set([...infrastructure, ...helpers.map((p) => p.pid)]);
  }

  /**
   * Sends `stream` as `chunk` events, pausing it while the runner's output is full or the
   * agent holds this request, and stopping it when the agent cancels the request. Resolves
   * with the number of bytes sent.
   */
  async function sendWithFlowControl(id: number, stream: Readable): Promise<number> {
    let sent = 0;
    let held = false;
    let full = false;
    const apply = (): void => {
      if (held || full) stream.pause();
      else stream.resume();
    };
    const hold = (value: boolean): void => {
      held = value;
      apply();
    };
    flows.set(id, {
      pause: () => hold(true),
      resume: () => hold(false),
      cancel: () => stream.destroy(new RunnerError('request_timeout', 'The read was cancelled')),
    });
    try {
      await new Promise<void>((resolve, reject) => {
        stream.on('data', (chunk: Buffer) => {
          sent += chunk.length;
          if (emit({ id, ev: 'chunk', data: chunk.toString('base64') }) || full) return;
          full = true;
          apply();
          drainWaiters.push(() => {
            full = false;
            apply();
          });
        });
        stream.on('end', resolve);
        stream.on('error', reject);
      });
    } finally {
      flows.delete(id);
    }
    return sent;
  }

  async function handle(request: RunnerRequest): Promise<void> {
    const { id } = request;
    switch (request.op) {
      case 'ping':
        emit({ id, ev: 'pong', pid: process.pid });
        return;
      case 'exec': {
        starting.set(id, false);
        let run: RunHandle;
        try {
          run = await startRun(request, {
            stdout: (chunk) => emit({ id, ev: 'stdout', data: chunk.toString('base64') }),
            stderr: (chunk) => emit({ id, ev: 'stderr', data: chunk.toString('base64') }),
            onDrain: (resume) => drainWaiters.push(resume),
          });
        } catch (err) {
          starting.delete(id);
          throw err;
        }
        // A cancel that came while the run was being prepared applies now.
        const cancelledEarly = starting.get(id) === true;
        starting.delete(id);
        runs.set(id, run);
        flows.set(id, {
          pause: () => run.pauseOutput(),
          resume: () => run.resumeOutput(),
          cancel: () => run.cancel(),
        });
        if (cancelledEarly) run.cancel();
        emit({ id, ev: 'started' });
        try {
          emit({ id, ev: 'exec', ...(await run.done) });
        } finally {
          runs.delete(id);
          flows.delete(id);
        }
        return;
      }
      case 'cancel':
        if (starting.has(request.target)) starting.set(request.target, true);
        flows.get(request.target)?.cancel();
        emit({ id, ev: 'killed', pids: [] });
        return;
      case 'pause':
      case 'resume': {
        const flow = flows.get(request.target);
        if (request.op === 'pause') flow?.pause();
        else flow?.resume();
        emit({ id, ev: 'flow' });
        return;
      }
      case 'kill': {
        const users = async (): Promise<ProcessInfo[]> => {
          const all = await listProcesses();
          return userProcesses(all, infrastructureOf(all));
        };
        // One process and its descendants (killing all is done by the agent, from the host).
        const { pid } = request;
        if (!(await users()).some((p) => p.pid === pid)) throw processNotFound(pid);
        const pids = await stopThenKill((all, stopped) =>
          treesOf(userProcesses(all, infrastructureOf(all)), [pid], stopped),
        );
        emit({ id, ev: 'killed', pids: pids.sort((a, b) => a - b) });
        return;
      }
      case 'stats': {
        const all = await listProcesses();
        emit({
          id,
          ev: 'stats',
          filesCount: await countFiles(WORKSPACE),
          activeProcesses: userProcesses(all, infrastructureOf(all)).length,
        });
        return;
      }
      case 'writeFiles': {
        emit({ id, ev: 'written', files: await writeFiles(request.files) });
        return;
      }
      case 'readFile': {
        const { size, stream } = await openFile(request.path);
        emit({ id, ev: 'opened', size });
        // The size was announced (Content-Length): a file cut short meanwhile is an error.
        if ((await sendWithFlowControl(id, stream)) !== size) {
          throw new RunnerError('internal_error', `${request.path} shrank while it was read`);
        }
        emit({ id, ev: 'read', size });
        return;
      }
      case 'missingPackages': {
        const cwd = await workingDirectory(request.cwd);
        emit({ id, ev: 'packages', packages: await missingPackages(request.code, cwd) });
        return;
      }
      case 'installBundle': {
        await extractBundle(
          await workingDirectory(request.cwd),
          Buffer.from(request.bundle, 'base64'),
        );
        emit({ id, ev: 'installed' });
        return;
      }
      case 'listFiles': {
        emit({ id, ev: 'listed', ...(await listFiles(request.path, request)) });
        return;
      }
      default:
        throw new RunnerError('invalid_request', 'Unknown operation');
    }
  }

  const lines = createInterface({ input, crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === '') continue;
    let request: RunnerRequest;
    try {
      request = JSON.parse(line) as RunnerRequest;
    } catch {
      continue; // not ours to answer: no id
    }
    handle(request).catch((err: unknown) => fail(request.id, err));
  }
  // The agent went away: foreground runs stop; background processes live on.
  for (const run of runs.values()) run.cancel();
}
