import { readFile, readlink, stat } from 'node:fs/promises';
import { RUNNER_FRONT_PATH, RUNNER_USER, SANDBOX_GID, SANDBOX_UID } from '@sandbox/contract';
import type { ContainerClient, ContainerState, HostProcess } from './container-client';

/**
 * A runner's Node: started by its front (packages/runner/front/main.go, without V8's memory
 * reducer), never by the agent itself (ADR 47).
 */
const RUNNER_ARGS = 'node --no-memory-reducer /opt/sandbox/runner/main.js';
/**
 * A runner's pre-started Node while it waits (a run renames it after its code file). A run
 * that names itself so only hides from its own session's kill-all.
 */
const WAITING_ZYGOTE_SCRIPT = '/opt/sandbox/runner/zygote.js';
const WAITING_ZYGOTE_ARGS = ` --enable-source-maps ${WAITING_ZYGOTE_SCRIPT}`;
/** The runner's spawner (packages/runner/native): runs are its children, never the runner's. */
const SPAWNER_PATH = '/opt/sandbox/runner/run-spawner';

/**
 * The front's armed shells (ADR 48, packages/runner/front/shells.go) as `ps` shows them: the
 * start of their script. One still waiting for its run holds its command pipe as fd 3, and
 * closes it once it has its command. A run that makes itself look so only hides from its own
 * session's kill-all, as one named like a zygote does.
 */
export const ARMED_SHELL_ARGS = '/bin/bash -c IFS= read -r -u 3 -N 2 __sandbox_shell ';

/** The processes that look like armed shells still waiting (their parent is checked apart). */
export async function waitingShells(processes: readonly HostProcess[]): Promise<Set<number>> {
  const candidates = processes.filter((p) => p.args.startsWith(ARMED_SHELL_ARGS));
  const waiting = await Promise.all(
    candidates.map((p) =>
      readlink(`/proc/${p.pid}/fd/3`).then(
        (target) => target.startsWith('pipe:'),
        () => false,
      ),
    ),
  );
  return new Set(candidates.filter((_p, i) => waiting[i]).map((p) => p.pid));
}

/** The process's pid inside its container (last NSpid entry), from the host's /proc. */
async function containerPid(hostPid: number): Promise<number | undefined> {
  const status = await readFile(`/proc/${hostPid}/status`, 'utf8').catch(() => '');
  const line = status.split('\n').find((l) => l.startsWith('NSpid:'));
  const last = line?.trim().split(/\s+/).pop();
  return last === undefined ? undefined : Number(last);
}

/**
 * The processes of a sandbox that belong to its user: all but its init, the keep-alive, the
 * runners' fronts, the runners and their helpers (the spawners, esbuild, a zygote waiting for
 * its run, the `waiting` armed shells that are a spawner's children). A front is started by
 * an exec: its parent is outside the container, which no process of the user's can have.
 */
export function userProcessesOf(
  processes: readonly HostProcess[],
  initPid: number,
  waiting: ReadonlySet<number> = new Set(),
): HostProcess[] {
  const keepAlive = processes
    .filter((p) => p.ppid === initPid && p.args === 'sleep infinity')
    .sort((a, b) => a.pid - b.pid)[0]?.pid;
  const inContainer = new Set(processes.map((p) => p.pid));
  const fronts = new Set(
    processes
      .filter((p) => p.args === RUNNER_FRONT_PATH && !inContainer.has(p.ppid))
      .map((p) => p.pid),
  );
  const runners = new Set(
    processes.filter((p) => p.args === RUNNER_ARGS && fronts.has(p.ppid)).map((p) => p.pid),
  );
  const spawners = new Set(
    processes
      .filter(
        (p) => (runners.has(p.ppid) || fronts.has(p.ppid)) && p.args.split(' ')[0] === SPAWNER_PATH,
      )
      .map((p) => p.pid),
  );
  return processes.filter(
    (p) =>
      p.pid !== initPid &&
      p.pid !== keepAlive &&
      !fronts.has(p.pid) &&
      !runners.has(p.pid) &&
      !spawners.has(p.pid) &&
      !(runners.has(p.ppid) && p.args.includes('esbuild')) &&
      // A zygote is the spawner's child (before: the runner's, in sandboxes made before it).
      !((spawners.has(p.ppid) || runners.has(p.ppid)) && p.args.endsWith(WAITING_ZYGOTE_ARGS)) &&
      !(spawners.has(p.ppid) && waiting.has(p.pid)),
  );
}

/** The user's processes in a listing of the host's, the armed shells still waiting left out. */
export async function userProcessesNow(
  processes: readonly HostProcess[],
  initPid: number,
): Promise<HostProcess[]> {
  return userProcessesOf(processes, initPid, await waitingShells(processes));
}

/** How many rounds of kills a sandbox that cannot be frozen gets before giving up. */
const UNFROZEN_ROUNDS = 50;

/** SIGKILL to each user process the sandbox has now; returns them (host pid, pid inside). */
async function killUserProcesses(
  containers: ContainerClient,
  containerId: string,
  initPid: number,
): Promise<Array<{ host: number; inside: number | undefined }>> {
  const targets = await userProcessesNow(await containers.top(containerId), initPid);
  const killed: Array<{ host: number; inside: number | undefined }> = [];
  for (const target of targets) {
    const inside = await containerPid(target.pid);
    try {
      process.kill(target.pid, 'SIGKILL');
      killed.push({ host: target.pid, inside });
    } catch {
      // gone already
    }
  }
  return killed;
}

const insidePids = (killed: Array<{ inside: number | undefined }>): number[] =>
  [...new Set(killed.flatMap((k) => (k.inside === undefined ? [] : [k.inside])))].sort(
    (a, b) => a - b,
  );

/**
 * Kills every user process of a sandbox at once, from the host: the container is frozen
 * (nothing can fork), every user process gets SIGKILL, and it is thawed. A fork bomb that
 * starves the sandbox's own CPU cannot slow this down. The kernel may fail to freeze a
 * cgroup whose processes fork without pause (runc: "unable to freeze"): then it kills in
 * rounds until none is left, which a bomb held at its process limit cannot outrun. Returns
 * the killed pids as the sandbox sees them.
 */
export async function killAllInContainer(
  containers: ContainerClient,
  { id: containerId, pid: initPid, ownKernel }: Pick<ContainerState, 'id' | 'pid' | 'ownKernel'>,
): Promise<number[]> {
  if (ownKernel) return killFromInside(containers, containerId);
  const freezeError = await containers.pause(containerId).then(
    () => undefined,
    (err: unknown) => err,
  );
  if (freezeError !== undefined) {
    return killUnfrozen(containers, containerId, initPid, freezeError);
  }
  try {
    const killed = await killUserProcesses(containers, containerId, initPid);
    await containers.unpause(containerId);
    await waitUntilGone(killed.map((k) => k.host));
    return insidePids(killed);
  } catch (err) {
    await containers.unpause(containerId).catch(() => undefined);
    throw err;
  }
}

async function killUnfrozen(
  containers: ContainerClient,
  containerId: string,
  initPid: number,
  freezeError: unknown,
): Promise<number[]> {
  const killed: Array<{ host: number; inside: number | undefined }> = [];
  for (let round = 0; round < UNFROZEN_ROUNDS; round += 1) {
    const now = await killUserProcesses(containers, containerId, initPid);
    if (now.length === 0) {
      await waitUntilGone(killed.map((k) => k.host));
      return insidePids(killed);
    }
    killed.push(...now);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw freezeError;
}

/** Waits (up to 3 s) until the killed processes are reaped, so that a next run can fork. */
async function waitUntilGone(hostPids: readonly number[]): Promise<void> {
  const deadline = Date.now() + 3000;
  let remaining = [...hostPids];
  while (remaining.length > 0 && Date.now() < deadline) {
    const alive = await Promise.all(
      remaining.map((pid) =>
        stat(`/proc/${pid}`).then(
          () => true,
          () => false,
        ),
      ),
    );
    remaining = remaining.filter((_pid, i) => alive[i]);
    if (remaining.length > 0) await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Rounds of stop, list and kill one exec of a kill-all from inside runs at most. */
const INSIDE_ROUNDS = 5;
/** The exit code of an exec whose last round still found processes. */
const LEFT_EXIT = 3;
/** Execs of a kill-all from inside, each a new try when the last could not start or finish. */
const INSIDE_EXECS = 3;

/**
 * A kill-all from inside, in rounds within one exec (an exec on a loaded gVisor node takes
 * seconds). Each round stops every process the caller may signal, three times (gVisor applies
 * `kill -1` process by process, and a fork bomb's children born meanwhile escape a single
 * pass; a stopped process forks no more), prints the pids of the sandbox user's processes it
 * sees, then kills them all with `kill -KILL -1`. It ends (0) when a round after the first
 * finds none, else with LEFT_EXIT after INSIDE_ROUNDS. Run as that user in full (real uid
 * too), it reaches exactly the user's processes: never the runner and its spawner, which keep
 * root as their real uid (ADR 28), nor init and the keep-alive (root); `kill -1` spares the
 * caller. On gVisor a waiting zygote is the user's: it is killed (the runner starts another)
 * but not listed, as the user never started it; so is a waiting armed shell (its cmdline
 * read without its NULs). The listing uses builtins only, so it never
 * counts a child of its own; the pause between rounds (for the killed to be reaped) is the
 * only child, and is skipped when the user's process limit leaves no room for it.
 */
const KILL_ROUNDS = `
round=0
while :; do
  round=$((round + 1))
  found=
  kill -STOP -1 2>/dev/null; kill -STOP -1 2>/dev/null; kill -STOP -1 2>/dev/null
  for f in /proc/[0-9]*/status; do
    pid=\${f#/proc/}; pid=\${pid%/status}
    [ "$pid" = "$$" ] && continue
    cmd=
    read -r cmd 2>/dev/null <"/proc/$pid/cmdline"
    case $cmd in *${WAITING_ZYGOTE_SCRIPT}) continue ;; esac
    case $cmd in *"${ARMED_SHELL_ARGS.slice('/bin/bash -c '.length)}"*) [ -p "/proc/$pid/fd/3" ] && continue ;; esac
    state=
    while read -r key first rest; do
      case $key in
        State:) state=$first ;;
        Uid:) [ "$first" = ${SANDBOX_UID} ] && [ "$state" != Z ] && echo "$pid" && found=1; break ;;
      esac
    done 2>/dev/null <"$f"
  done
  kill -KILL -1 2>/dev/null
  [ "$round" -gt 1 ] && [ -z "$found" ] && exit 0
  [ "$round" -ge ${INSIDE_ROUNDS} ] && exit ${LEFT_EXIT}
  sleep 0.02 2>/dev/null
done
`;

/**
 * Kill-all in a sandbox on a kernel of its own (gVisor): the host sees none of its processes
 * (Docker's `top` lists the sandbox's pids against the host's processes of those numbers),
 * so the kill happens inside, through `docker exec`, as the sandbox user. The exec starts as
 * root and becomes that user with setpriv: a fork bomb holding the user's whole process limit
 * (RLIMIT_NPROC there) cannot keep the killer from starting. An exec that could not start
 * (126), was killed (137) or left processes is followed by another, up to INSIDE_EXECS.
 */
async function killFromInside(containers: ContainerClient, containerId: string): Promise<number[]> {
  const killed = new Set<number>();
  let last = 0;
  for (let attempt = 0; attempt < INSIDE_EXECS; attempt += 1) {
    const { code, stdout } = await containers.execute(containerId, RUNNER_USER, [
      'setpriv',
      `--reuid=${SANDBOX_UID}`,
      `--regid=${SANDBOX_GID}`,
      '--keep-groups',
      'sh',
      '-c',
      KILL_ROUNDS,
    ]);
    for (const word of stdout.split(/\s+/)) if (/^\d+$/.test(word)) killed.add(Number(word));
    if (code === 0) return [...killed].sort((a, b) => a - b);
    if (code !== 126 && code !== 137 && code !== LEFT_EXIT) {
      throw new Error(`kill-all in ${containerId} ended with ${code}`);
    }
    last = code;
    if (code === 126) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(
    last === LEFT_EXIT
      ? `kill-all in ${containerId}: processes left after ${INSIDE_EXECS * INSIDE_ROUNDS} rounds`
      : `kill-all in ${containerId} ended with ${last}`,
  );
}
