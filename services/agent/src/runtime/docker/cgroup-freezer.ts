import { readFileSync } from 'node:fs';
import { access, readFile, writeFile } from 'node:fs/promises';
import { constants } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { cgroupMounts, readMountinfo } from './cpu-groups';

/**
 * A container's freezer, written by the agent itself: `docker pause`/`unpause` go through
 * dockerd, containerd, its shim and a `runc` process each (about 12 ms of the node's CPU per
 * thaw on a quiet 2-core VM, several times that in a slow hour), where this is one write to a
 * cgroup file. The pool freezes its members this way (warm-pool.ts): Docker still sees them
 * running, so they are thawed before anything of Docker's touches them (a removal's SIGKILL
 * waits for a thaw on cgroup v1).
 */
export interface CgroupFreezer {
  /** The file that freezes and thaws the group. */
  path: string;
  frozen: string;
  thawed: string;
  /** The file, and the line in it, that says the group is frozen now. */
  statePath: string;
  frozenLine: string;
}

/** How long a freeze may take to settle (tasks in a system call finish it first). */
const FREEZE_WAIT_MS = 2000;
const FREEZE_POLL_MS = 5;

/**
 * The freezer of the cgroup that `cgroupText` (a process's /proc/<pid>/cgroup) names, under the
 * cgroup mounts of `mountinfo`: v1's `freezer` controller, or v2's `cgroup.freeze`. Undefined
 * when neither is mounted here.
 */
export function freezerOf(cgroupText: string, mountinfo: string): CgroupFreezer | undefined {
  const mounts = cgroupMounts(mountinfo);
  for (const line of cgroupText.split('\n')) {
    const [hierarchy, controllers = '', ...rest] = line.split(':');
    const path = rest.join(':');
    if (hierarchy === undefined || path === '') continue;
    if (controllers.split(',').includes('freezer')) {
      const mount = mounts.find((m) => m.fsType === 'cgroup' && m.options.includes('freezer'));
      if (mount === undefined) continue;
      const file = join(mount.mountPoint, path, 'freezer.state');
      return {
        path: file,
        frozen: 'FROZEN',
        thawed: 'THAWED',
        statePath: file,
        frozenLine: 'FROZEN',
      };
    }
  }
  const unified = cgroupText.split('\n').find((line) => line.startsWith('0::'));
  const mount = mounts.find((m) => m.fsType === 'cgroup2');
  if (unified === undefined || mount === undefined) return undefined;
  const dir = join(mount.mountPoint, unified.slice(3));
  return {
    path: join(dir, 'cgroup.freeze'),
    frozen: '1',
    thawed: '0',
    statePath: join(dir, 'cgroup.events'),
    frozenLine: 'frozen 1',
  };
}

/** The freezer of process `pid`'s cgroup, if this host lets the agent write it. */
export async function freezerOfProcess(pid: number): Promise<CgroupFreezer | undefined> {
  let cgroupText: string;
  try {
    cgroupText = readFileSync(`/proc/${pid}/cgroup`, 'utf8');
  } catch {
    return undefined;
  }
  const freezer = freezerOf(cgroupText, readMountinfo());
  if (freezer === undefined) return undefined;
  try {
    await access(freezer.path, constants.W_OK);
    return freezer;
  } catch {
    return undefined;
  }
}

/** Whether the group is frozen now. */
export async function isFrozen(freezer: CgroupFreezer): Promise<boolean> {
  const state = await readFile(freezer.statePath, 'utf8');
  return state.split('\n').some((line) => line.trim() === freezer.frozenLine);
}

/**
 * Freezes the group and waits until every task in it is frozen; false (and thawed again) if
 * that did not happen in time.
 */
export async function freeze(freezer: CgroupFreezer): Promise<boolean> {
  await writeFile(freezer.path, freezer.frozen);
  const deadline = Date.now() + FREEZE_WAIT_MS;
  while (Date.now() < deadline) {
    if (await isFrozen(freezer)) return true;
    await sleep(FREEZE_POLL_MS);
  }
  await thaw(freezer);
  return false;
}

export async function thaw(freezer: CgroupFreezer): Promise<void> {
  await writeFile(freezer.path, freezer.thawed);
}
