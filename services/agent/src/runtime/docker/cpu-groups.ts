import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { access, chown, mkdir, readdir, rmdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '@sandbox/logger';

/** The CFS period Docker uses: a quota is CPUs × this, in microseconds. */
const PERIOD_US = 100_000;
/** After a container's removal its processes may take a moment to leave their group. */
const REMOVE_ATTEMPTS = 5;
const REMOVE_RETRY_MS = 20;
/**
 * A group younger than this is never collected: its container may be made right now, after
 * the listing that `collect` compares with was taken.
 */
const MIN_LEFTOVER_AGE_MS = 60_000;

/** A cgroup file system's mount, from a line of /proc/self/mountinfo. */
export interface CgroupMount {
  mountPoint: string;
  /** `cgroup` (v1) or `cgroup2`. */
  fsType: string;
  /** The mount's options and the file system's (its controllers, `name=`, flags). */
  options: string[];
}

/** The cgroup file systems mounted, from /proc/self/mountinfo. */
export function cgroupMounts(mountinfo: string): CgroupMount[] {
  const mounts: CgroupMount[] = [];
  for (const line of mountinfo.split('\n')) {
    const [mount, source] = line.split(' - ');
    const fields = mount?.split(' ') ?? [];
    const [fsType = '', , superOptions = ''] = source?.split(' ') ?? [];
    const mountPoint = fields[4];
    if ((fsType !== 'cgroup' && fsType !== 'cgroup2') || !mountPoint) continue;
    mounts.push({
      mountPoint: mountPoint.replace(/\\040/g, ' '),
      fsType,
      options: [...(fields[5]?.split(',') ?? []), ...superOptions.split(',')],
    });
  }
  return mounts;
}

/**
 * Where the cgroup v1 `cpu` controller is mounted, from /proc/self/mountinfo; undefined on a
 * host without one (cgroup v2 only: there a process of the sandbox could not move itself into
 * a group it may write, as the common ancestor of both groups would have to be writable too).
 */
export function cpuControllerMount(mountinfo: string): string | undefined {
  return cgroupMounts(mountinfo).find((m) => m.fsType === 'cgroup' && m.options.includes('cpu'))
    ?.mountPoint;
}

/** This process's /proc/self/mountinfo; empty where it cannot be read. */
export function readMountinfo(): string {
  try {
    return readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return '';
  }
}

/**
 * Sets the weight of the group that holds every session's processes (ADR 57). Left at the
 * kernel's 1024, all of them together weigh one task against each of the control plane's:
 * while the gateway and the agent are busy, the runs they wait on get a sliver of the CPU.
 */
function weigh(group: string, shares: number, logger: Logger): void {
  try {
    writeFileSync(join(group, 'cpu.shares'), String(shares));
  } catch (err) {
    logger.warn({ err, group, shares }, "cannot weigh the sessions' CPU group");
  }
}

/** The CFS quota of `cpus`, in microseconds per period. */
export function quotaUs(cpus: number): number {
  return Math.max(1000, Math.round(cpus * PERIOD_US));
}

/**
 * The CPU groups of this node's sessions: one cgroup (v1 `cpu` controller) per sandbox, with
 * the session's CPU limit, outside Docker's group of the container. Its `cgroup.procs` belongs
 * to the sandbox user, who can move processes into the group (never out: nothing else of the
 * hierarchy is in the sandbox). The runner and the zygotes it starts stay in the container's
 * own group, so the session's CPU limit is spent on the session's code only.
 */
export class CpuGroups {
  constructor(
    /** This node's directory of groups, e.g. /sys/fs/cgroup/cpu/sandbox/<prefix>.<node>. */
    readonly root: string,
    private readonly owner: { uid: number; gid: number },
    private readonly logger: Logger,
  ) {}

  /**
   * The node's groups under the host's `cpu` controller; undefined (logged) where there is
   * none, or it cannot be written (the agent then leaves CPU limits to Docker alone).
   */
  static open(options: {
    name: string;
    owner: { uid: number; gid: number };
    /** The weight of all the host's sessions together (`cpu.shares` of their common group). */
    shares: number;
    logger: Logger;
    mountinfo?: string;
  }): CpuGroups | undefined {
    const { logger } = options;
    const mount = cpuControllerMount(options.mountinfo ?? readMountinfo());
    if (mount === undefined) {
      logger.warn('no cgroup v1 cpu controller: the runner shares the session CPU limit');
      return undefined;
    }
    const sessions = join(mount, 'sandbox');
    const root = join(sessions, options.name);
    try {
      mkdirSync(root, { recursive: true });
    } catch (err) {
      logger.warn({ err, root }, 'cannot make CPU groups: the runner shares the session CPU limit');
      return undefined;
    }
    weigh(sessions, options.shares, logger);
    return new CpuGroups(root, options.owner, logger);
  }

  /** The `cgroup.procs` file of group `key`, which the sandbox gets. */
  procs(key: string): string {
    return join(this.root, key, 'cgroup.procs');
  }

  /** Whether group `key` is there (a reboot empties the hierarchy, not Docker's containers). */
  exists(key: string): Promise<boolean> {
    return access(this.procs(key)).then(
      () => true,
      () => false,
    );
  }

  /** Makes group `key` (or takes the one left by a container of that name) with `cpus`. */
  async create(key: string, cpus: number): Promise<string> {
    const dir = join(this.root, key);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'cpu.cfs_period_us'), String(PERIOD_US));
    await this.setCpus(key, cpus);
    await chown(this.procs(key), this.owner.uid, this.owner.gid);
    return this.procs(key);
  }

  async setCpus(key: string, cpus: number): Promise<void> {
    await writeFile(join(this.root, key, 'cpu.cfs_quota_us'), String(quotaUs(cpus)));
  }

  /**
   * Removes group `key` once its processes are gone; true when it is gone. A group that still
   * holds processes stays for `collect` to remove later.
   */
  async remove(key: string): Promise<boolean> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        await rmdir(join(this.root, key));
        return true;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') return true;
        if (code !== 'EBUSY' || attempt >= REMOVE_ATTEMPTS) {
          this.logger.warn({ err, key }, 'CPU group not removed yet');
          return false;
        }
        await sleep(REMOVE_RETRY_MS);
      }
    }
  }

  /** Removes the node's directory of groups if no group is left in it (an agent's stop). */
  async close(): Promise<void> {
    await rmdir(this.root).catch(() => undefined);
  }

  /** The groups there are. */
  async keys(): Promise<string[]> {
    const entries = await readdir(this.root, { withFileTypes: true }).catch(() => []);
    return entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  }

  /**
   * Removes every group but those of `live` containers and those made in the last minute; the
   * keys removed.
   */
  async collect(live: ReadonlySet<string>, now = Date.now()): Promise<string[]> {
    const removed: string[] = [];
    for (const key of await this.keys()) {
      if (live.has(key)) continue;
      const made = await stat(join(this.root, key)).then(
        (info) => info.mtimeMs,
        () => now,
      );
      if (now - made >= MIN_LEFTOVER_AGE_MS && (await this.remove(key))) removed.push(key);
    }
    return removed;
  }
}
