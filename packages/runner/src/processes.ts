import { readdirSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { RunnerError } from './protocol';

export interface ProcessInfo {
  pid: number;
  ppid: number;
  /** Process group. */
  pgid: number;
  /** Resident memory, bytes. */
  rss: number;
  /** CPU used by the process and its reaped children, ms. */
  cpuMs: number;
}

/** Clock ticks per second of /proc times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

const PAGE_SIZE = 4096;

/** A process's line of /proc/<pid>/stat, parsed; undefined if it has exited. */
function parseStat(pid: number, stat: string): ProcessInfo | undefined {
  // Fields after the command name, which is in parentheses and may contain spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  if (state === 'Z' || state === 'X') return undefined; // exited, not yet reaped
  const ppid = Number(fields[1]);
  const pgid = Number(fields[2]);
  const rssPages = Number(fields[21]);
  const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
  return { pid, ppid, pgid, rss: rssPages * PAGE_SIZE, cpuMs: (ticks * 1000) / TICKS_PER_SECOND };
}

async function readInfo(pid: number, procRoot: string): Promise<ProcessInfo | undefined> {
  const stat = await readFile(`${procRoot}/${pid}/stat`, 'utf8').catch(() => undefined);
  return stat === undefined ? undefined : parseStat(pid, stat);
}

const PID_NAME = /^\d+$/;

/** Every live process visible in /proc. */
export async function listProcesses(procRoot = '/proc'): Promise<ProcessInfo[]> {
  const names = await readdir(procRoot);
  const infos = await Promise.all(
    names.filter((name) => PID_NAME.test(name)).map((name) => readInfo(Number(name), procRoot)),
  );
  return infos.filter((info): info is ProcessInfo => info !== undefined);
}

/**
 * listProcesses without the thread pool: for a sandbox's few processes, reading /proc in
 * place costs a fraction of the round trips each asynchronous read takes. For polls that
 * run often; the caller bounds how often by what a listing costs.
 */
export function listProcessesNow(procRoot = '/proc'): ProcessInfo[] {
  const infos: ProcessInfo[] = [];
  for (const name of readdirSync(procRoot)) {
    if (!PID_NAME.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`${procRoot}/${name}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    const info = parseStat(Number(name), stat);
    if (info !== undefined) infos.push(info);
  }
  return infos;
}

/** `root` and its descendants, from one listing. */
export function descendants(all: readonly ProcessInfo[], root: number): ProcessInfo[] {
  const children = new Map<number, ProcessInfo[]>();
  for (const info of all) children.set(info.ppid, [...(children.get(info.ppid) ?? []), info]);
  const found: ProcessInfo[] = [];
  const queue = all.filter((info) => info.pid === root);
  while (queue.length > 0) {
    const info = queue.shift() as ProcessInfo;
    found.push(info);
    queue.push(...(children.get(info.pid) ?? []));
  }
  return found;
}

/** The sandbox's keep-alive: the first `sleep infinity` that init started. */
export async function findKeepAlive(
  all: readonly ProcessInfo[],
  procRoot = '/proc',
): Promise<number | undefined> {
  const candidates = all.filter((info) => info.ppid === 1).sort((a, b) => a.pid - b.pid);
  for (const info of candidates) {
    const cmdline = await readFile(`${procRoot}/${info.pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline === 'sleep\0infinity\0') return info.pid;
  }
  return undefined;
}

/**
 * Processes started by users of the sandbox: all but the container's init (pid 1), its
 * keep-alive and the runner itself.
 */
export function userProcesses(
  all: readonly ProcessInfo[],
  infrastructure: ReadonlySet<number>,
): ProcessInfo[] {
  return all.filter((info) => info.pid !== 1 && !infrastructure.has(info.pid));
}

/** A run's processes: its leader's descendants and every member of its process group. */
export function runTree(all: readonly ProcessInfo[], leader: number): ProcessInfo[] {
  const tree = new Map(descendants(all, leader).map((p) => [p.pid, p]));
  for (const info of all) if (info.pgid === leader) tree.set(info.pid, info);
  return [...tree.values()];
}

/** SIGKILLs each pid (its tree first collected by the caller); returns the ones signalled. */
export function killAll(pids: readonly number[]): number[] {
  const killed: number[] = [];
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
      killed.push(pid);
    } catch {
      // already gone
    }
  }
  return killed;
}

/** How long `waitGone` waits for killed processes to end, and how often it looks. */
const GONE_TIMEOUT_MS = 2000;
const GONE_POLL_MS = 5;

/**
 * Resolves once none of `pids` runs any more (gone from /proc, or exited and not yet reaped),
 * or after `timeoutMs`. A SIGKILLed process ends only once it is scheduled, and the session's
 * processes run under its CPU quota: throttled, they may still be listed for up to a quota
 * period after the signal, and a caller told "killed" would still find them.
 */
export async function waitGone(
  pids: readonly number[],
  timeoutMs = GONE_TIMEOUT_MS,
  procRoot = '/proc',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let left = [...pids];
  for (;;) {
    const infos = await Promise.all(left.map((pid) => readInfo(pid, procRoot)));
    left = left.filter((_, i) => infos[i] !== undefined);
    if (left.length === 0 || Date.now() >= deadline) return;
    await sleep(GONE_POLL_MS);
  }
}

/**
 * Kills what `select` lists, again and again until it lists nothing (a fork bomb keeps
 * forking while it is being killed), at most `rounds` times; returns every pid killed.
 */
export async function killUntilGone(
  select: () => Promise<number[]>,
  rounds = 50,
): Promise<number[]> {
  const killed = new Set<number>();
  for (let round = 0; round < rounds; round += 1) {
    const targets = await select();
    if (targets.length === 0) break;
    for (const pid of killAll(targets)) killed.add(pid);
  }
  return [...killed];
}

/**
 * Kills a process tree that may be forking or detaching while it is killed: its members are
 * first stopped (SIGSTOP), listing again until no new member appears — a stopped process
 * cannot fork, and its children keep it as parent, so nothing escapes into a new session or
 * to init — and then every member is killed. `select` lists the tree, given what is already
 * stopped. Returns every pid killed.
 */
export async function stopThenKill(
  select: (
    all: readonly ProcessInfo[],
    stopped: ReadonlySet<number>,
  ) => Promise<number[]> | number[],
  rounds = 50,
): Promise<number[]> {
  const stopped = new Set<number>();
  let killed: number[];
  try {
    for (let round = 0; round < rounds; round += 1) {
      const fresh = (await select(await listProcesses(), stopped)).filter(
        (pid) => !stopped.has(pid),
      );
      if (fresh.length === 0) break;
      for (const pid of fresh) {
        try {
          process.kill(pid, 'SIGSTOP');
          stopped.add(pid);
        } catch {
          // already gone
        }
      }
    }
  } finally {
    // Whatever happened while listing, nothing is left stopped.
    killed = killAll([...stopped]);
  }
  // What slipped through (the round limit reached) is killed the plain way.
  const rest = await killUntilGone(async () => select(await listProcesses(), new Set()));
  return [...new Set([...killed, ...rest])];
}

/**
 * The processes whose environment holds `entry` (`NAME=value`): what a run started, even
 * detached from its tree (double forks, `setsid` of an exited parent). Best effort: a process
 * can drop the variable.
 */
export async function markedWith(
  all: readonly ProcessInfo[],
  entry: string,
  procRoot = '/proc',
): Promise<number[]> {
  const marked = await Promise.all(
    all.map(async (info) => {
      const environ = await readFile(`${procRoot}/${info.pid}/environ`, 'utf8').catch(() => '');
      return environ.split('\0').includes(entry) ? info.pid : undefined;
    }),
  );
  return marked.filter((pid): pid is number => pid !== undefined);
}

/** `select` for stopThenKill: the trees under `roots` and under every stopped process. */
export function treesOf(
  all: readonly ProcessInfo[],
  roots: readonly number[],
  stopped: ReadonlySet<number>,
): number[] {
  const found = new Set<number>();
  for (const root of [...roots, ...stopped]) {
    for (const info of descendants(all, root)) found.add(info.pid);
  }
  return [...found];
}

export function processNotFound(pid: number): RunnerError {
  return new RunnerError('process_not_found', `No process ${pid} in this session`, { pid });
}
