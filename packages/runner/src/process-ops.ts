import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { readdir } from 'node:fs/promises';
import { armingShells } from './arming-shells';
import { zygotes } from './exec';
import { transpilerWarmed } from './transpile';
import type { OpHandler, RunnerContext } from './op-handlers';
import {
  findKeepAlive,
  listProcesses,
  processNotFound,
  stopThenKill,
  treesOf,
  userProcesses,
  waitGone,
  type ProcessInfo,
} from './processes';
import { RunnerError } from './protocol';
import { WORKSPACE } from './workspace-path';

const MAX_COUNTED_FILES = 1_000_000;

/** The runner itself and, if there is one, the container's keep-alive. */
export async function infrastructurePids(): Promise<Set<number>> {
  const infrastructure = new Set([process.pid]);
  const keepAlive = await findKeepAlive(await listProcesses());
  if (keepAlive !== undefined) infrastructure.add(keepAlive);
  return infrastructure;
}

/**
 * The runner's own helpers (its children that are not runs: the spawner, esbuild), the zygote
 * waiting for the next code run (the spawner's child), the front and its children (this runner
 * and the front's spawner: the front's runs are that spawner's children), the front's armed
 * shells (its spawner's children too, waiting for a run: the front names them), and the rest.
 */
function infrastructureOf(
  { runs, infrastructure, front }: RunnerContext,
  all: readonly { pid: number; ppid: number }[],
  armedShells: readonly number[] = [],
): Set<number> {
  const leaders = new Set([...runs.values()].map((run) => run.pid));
  const helpers = all.filter(
    (p) =>
      (p.ppid === process.pid && !leaders.has(p.pid)) ||
      (front !== undefined && (p.pid === front || p.ppid === front)),
  );
  const waiting = zygotes.waitingPid();
  // The front's spawner: the front's child that is not this runner.
  const spawners = new Set(
    helpers.filter((p) => p.ppid === front && p.pid !== process.pid).map((p) => p.pid),
  );
  return new Set([
    ...infrastructure,
    ...helpers.map((p) => p.pid),
    ...armedShells,
    ...armingShells(all, spawners),
    ...(waiting === undefined ? [] : [waiting]),
  ]);
}

/** The processes the sandbox's users started, from one listing. */
async function usersProcesses(
  context: RunnerContext,
  armedShells?: readonly number[],
): Promise<ProcessInfo[]> {
  const all = await listProcesses();
  return userProcesses(all, infrastructureOf(context, all, armedShells));
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
 * A full garbage collection now. The start-up's garbage would otherwise be collected after
 * the thaw of a frozen pool member (V8 collects once an isolate goes quiet): tens of ms of
 * the new session's CPU, while its first run waits.
 */
function fullGc(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/**
 * Answers that the runner is alive, with its pid; with `settled`, once what it starts ahead of
 * runs (the transpiler, the next code run's Node) is warm, for a sandbox about to be frozen.
 */
export const pingOp: OpHandler<'ping'> = async ({ channel }, { id, settled }) => {
  if (settled === true) {
    await Promise.all([transpilerWarmed(), zygotes.settled()]);
    fullGc();
  }
  channel.emit({ id, ev: 'pong', pid: process.pid });
};

/** Watches are the runner's front's (front/watch.go, ADR 60): this runner never serves one. */
export const watchOp: OpHandler<'watch'> = () =>
  Promise.reject(
    new RunnerError('internal_error', "file watches are served by the runner's front"),
  );

/** Kills one process and its descendants (killing all is done by the agent, from the host). */
export const killOp: OpHandler<'kill'> = async (context, { id, pid, armedShells }) => {
  if (!(await usersProcesses(context, armedShells)).some((p) => p.pid === pid)) {
    throw processNotFound(pid);
  }
  const pids = await stopThenKill((all, stopped) =>
    treesOf(userProcesses(all, infrastructureOf(context, all, armedShells)), [pid], stopped),
  );
  // Answered once they have ended: a check right after the answer finds none of them.
  await waitGone(pids);
  context.channel.emit({ id, ev: 'killed', pids: pids.sort((a, b) => a - b) });
};

/** How many files the workspace holds and how many user processes run. */
export const statsOp: OpHandler<'stats'> = async (context, { id, armedShells }) => {
  const all = await listProcesses();
  context.channel.emit({
    id,
    ev: 'stats',
    filesCount: await countFiles(WORKSPACE),
    activeProcesses: userProcesses(all, infrastructureOf(context, all, armedShells)).length,
  });
};
