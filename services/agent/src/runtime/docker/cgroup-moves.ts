import { execFile } from 'node:child_process';
import { chmod, mkdir } from 'node:fs/promises';
import { promisify } from 'node:util';
import type { Logger } from '@sandbox/logger';
import { cgroupMounts, readMountinfo } from './cpu-groups';

/**
 * Where the agent mounts the hierarchy that turns `favordynmods` on (see below). Every
 * container's runtime looks it up (runc mounts each v1 hierarchy into the container, as the
 * container's root, remapped), so the path must be open to all: an agent-only directory
 * above it fails every container start.
 */
export const FAVOR_DYNMODS_MOUNT = '/run/sandbox-favordynmods';
/** The name of that hierarchy: it has no controller and holds no process of its own. */
export const FAVOR_DYNMODS_NAME = 'sandbox-favordynmods';

/** Whether a cgroup hierarchy in `mountinfo` (/proc/self/mountinfo) has `favordynmods` on. */
export function favorsDynmods(mountinfo: string): boolean {
  return cgroupMounts(mountinfo).some((m) => m.options.includes('favordynmods'));
}

export interface CgroupMovesDeps {
  logger: Logger;
  /** The agent's /proc/self/mountinfo (tests pass their own). */
  mountinfo?: () => Promise<string>;
  /** Runs `mount` with these arguments (tests pass their own). */
  mount?: (args: string[]) => Promise<void>;
  dir?: string;
}

const run = promisify(execFile);

/**
 * Makes moving a process into a cgroup cheap. Every run's first process moves itself into the
 * session's CPU group (a zygote, all its threads; a command's `sh`). Such a move takes the
 * kernel's lock over all thread groups for writing, and after a moment without moves that
 * lock is back in its fast mode for readers: the next writer waits for an RCU grace period,
 * 7–20 ms on this machine, inside the run (measured: 26 µs back to back, 8–20 ms 300 ms
 * after the last move). A code run 500 ms after the last one took 40 ms p50, 28 ms without
 * the wait.
 *
 * `favordynmods` on any cgroup hierarchy keeps that lock in its slow mode for good (the
 * kernel's documented trade: forks and exits pay an atomic operation more). An existing v1
 * hierarchy cannot be remounted with it, so the agent mounts a hierarchy of its own, named,
 * without controllers (no process is ever placed in it), under /run. Sandboxes see it as one
 * more line of /proc/self/cgroup, at its root. It stays mounted after
 * the agent (other agents of the host share it); a reboot removes it. A kernel without the
 * option (before 6.0) or an agent without the right to mount keeps the slow moves (logged).
 */
export async function ensureCheapCgroupMoves(deps: CgroupMovesDeps): Promise<boolean> {
  const { logger } = deps;
  const mountinfo = deps.mountinfo ?? (() => Promise.resolve(readMountinfo()));
  const mount = deps.mount ?? (async (args: string[]) => void (await run('mount', args)));
  const dir = deps.dir ?? FAVOR_DYNMODS_MOUNT;
  if (favorsDynmods(await mountinfo())) return true;
  try {
    await mkdir(dir, { recursive: true, mode: 0o755 });
    await chmod(dir, 0o755);
    await mount([
      '-t',
      'cgroup',
      '-o',
      `none,name=${FAVOR_DYNMODS_NAME},favordynmods`,
      'cgroup',
      dir,
    ]);
  } catch (err) {
    // Another agent of the host may have mounted it meanwhile.
    if (favorsDynmods(await mountinfo())) return true;
    logger.warn(
      { err },
      "could not turn on the kernel's favordynmods: each run waits several milliseconds to enter its CPU group",
    );
    return false;
  }
  logger.info({ mount: dir }, 'cgroup moves made cheap (favordynmods)');
  return true;
}
