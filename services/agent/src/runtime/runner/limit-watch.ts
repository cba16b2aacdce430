import { readFile, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import type { LimitExceeded } from '@sandbox/contract';

/** Kernel counters of one container's cgroups (v1 or v2) that only ever grow. */
export interface LimitCounters {
  oomKills: number;
  forkRefusals: number;
}

const CGROUP_ROOT = '/sys/fs/cgroup';

/** `key value` lines, as in memory.events, memory.oom_control and pids.events. */
function counter(text: string | undefined, key: string): number {
  const line = text?.split('\n').find((entry) => entry.startsWith(`${key} `));
  return line === undefined ? 0 : Number(line.slice(key.length + 1)) || 0;
}

const readOrUndefined = (path: string) => readFile(path, 'utf8').catch(() => undefined);

/** The cgroup directories of a process, per controller (`''` is the v2 unified hierarchy). */
async function cgroupDirs(pid: number): Promise<Map<string, string>> {
  const dirs = new Map<string, string>();
  const text = (await readOrUndefined(`/proc/${pid}/cgroup`)) ?? '';
  for (const line of text.split('\n')) {
    const [, controllers, path] = /^\d+:([^:]*):(.*)$/.exec(line) ?? [];
    if (controllers === undefined || path === undefined) continue;
    if (controllers === '') dirs.set('', join(CGROUP_ROOT, path));
    for (const name of controllers.split(',')) {
      if (name !== '') dirs.set(name, join(CGROUP_ROOT, name, path));
    }
  }
  return dirs;
}

/** Reads the OOM-kill and refused-fork counters of the container whose init is `pid`. */
export async function readLimitCounters(pid: number): Promise<LimitCounters> {
  const dirs = await cgroupDirs(pid);
  const memory = dirs.get('memory');
  const pids = dirs.get('pids');
  const unified = dirs.get('');
  const memoryEvents =
    memory === undefined
      ? await readOrUndefined(join(unified ?? '', 'memory.events'))
      : await readOrUndefined(join(memory, 'memory.oom_control'));
  const pidsEvents = await readOrUndefined(join(pids ?? unified ?? '', 'pids.events'));
  return {
    oomKills: counter(memoryEvents, 'oom_kill'),
    forkRefusals: counter(pidsEvents, 'max'),
  };
}

/** Whether the filesystem at `path` has no room left (blocks or inodes). */
export async function isFull(path: string): Promise<{ full: boolean; sizeMb: number }> {
  const stats = await statfs(path);
  const free = stats.bavail * stats.bsize;
  return {
    full: free < 64 * 1024 || stats.ffree === 0,
    sizeMb: Math.round((stats.blocks * stats.bsize) / (1024 * 1024)),
  };
}

/** What grew between two readings, and a full disk, as the limits exceeded. */
export function limitsExceeded(
  before: LimitCounters,
  after: LimitCounters,
  disk: { full: boolean; sizeMb: number } | undefined,
  max: { memoryMb: number; processes: number },
): LimitExceeded[] {
  const exceeded: LimitExceeded[] = [];
  if (after.oomKills > before.oomKills) exceeded.push({ limit: 'memory', max: max.memoryMb });
  if (disk?.full) exceeded.push({ limit: 'disk', max: disk.sizeMb });
  if (after.forkRefusals > before.forkRefusals) {
    exceeded.push({ limit: 'processes', max: max.processes });
  }
  return exceeded;
}
