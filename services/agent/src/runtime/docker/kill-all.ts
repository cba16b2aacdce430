import { readFile, stat } from 'node:fs/promises';
import type { ContainerClient, ContainerState, HostProcess } from './container-client';

const RUNNER_ARGS = 'node /opt/sandbox/runner/main.js';
/**
 * A runner's pre-started Node while it waits (a run renames it after its code file). A run
 * that names itself so only hides from its own session's kill-all.
 */
const WAITING_ZYGOTE_ARGS = ' --enable-source-maps /opt/sandbox/runner/zygote.js';
/** The runner's spawner (packages/runner/native): runs are its children, never the runner's. */
const SPAWNER_PATH = '/opt/sandbox/runner/run-spawner';

/** The process's pid inside its container (last NSpid entry), from the host's /proc. */
async function containerPid(hostPid: number): Promise<number | undefined> {
  const status = await readFile(`/proc/${hostPid}/status`, 'utf8').catch(() => '');
  const line = status.split('\n').find((l) => l.startsWith('NSpid:'));
  const last = line?.trim().split(/\s+/).pop();
  return last === undefined ? undefined : Number(last);
}

/**
 * The processes of a sandbox that belong to its user: all but its init, the keep-alive, the
 * runners and their helpers (the spawner, esbuild, a zygote waiting for its run).
 */
export function userProcessesOf(processes: readonly HostProcess[], initPid: number): HostProcess[] {
  const keepAlive = processes
    .filter((p) => p.ppid === initPid && p.args === 'sleep infinity')
    .sort((a, b) => a.pid - b.pid)[0]?.pid;
  const runners = new Set(processes.filter((p) => p.args === RUNNER_ARGS).map((p) => p.pid));
  return processes.filter(
    (p) =>
      p.pid !== initPid &&
      p.pid !== keepAlive &&
      !runners.has(p.pid) &&
      !(
        runners.has(p.ppid) &&
        (p.args.includes('esbuild') ||
          p.args.endsWith(WAITING_ZYGOTE_ARGS) ||
          p.args.split(' ')[0] === SPAWNER_PATH)
      ),
  );
}

/**
 * Kills every user process of a sandbox at once, from the host: the container is frozen
 * (nothing can fork), every user process gets SIGKILL, and it is thawed. A fork bomb that
 * starves the sandbox's own CPU cannot slow this down. Returns the killed pids as the sandbox
 * sees them.
 */
export async function killAllInContainer(
  containers: ContainerClient,
  { id: containerId, pid: initPid }: Pick<ContainerState, 'id' | 'pid'>,
): Promise<number[]> {
  await containers.pause(containerId);
  try {
    const processes = await containers.top(containerId);
    const targets = userProcessesOf(processes, initPid);
    const killed: number[] = [];
    for (const target of targets) {
      const inside = await containerPid(target.pid);
      try {
        process.kill(target.pid, 'SIGKILL');
        if (inside !== undefined) killed.push(inside);
      } catch {
        // gone already
      }
    }
    await containers.unpause(containerId);
    await waitUntilGone(targets.map((t) => t.pid));
    return killed.sort((a, b) => a - b);
  } catch (err) {
    await containers.unpause(containerId).catch(() => undefined);
    throw err;
  }
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
