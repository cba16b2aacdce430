import { readFileSync, statfsSync } from 'node:fs';
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

/**
 * A kernel file (cgroup, /proc), read at once: it is made in memory as it is read, and one
 * read costs less than a trip through the thread pool, of which a `readFile` takes four.
 * Every run reads two.
 */
function readOrUndefined(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** The cgroup directories of a process, per controller (`''` is the v2 unified hierarchy). */
function cgroupDirs(pid: number): Map<string, string> {
  const dirs = new Map<string, string>();
  const text = readOrUndefined(`/proc/${pid}/cgroup`) ?? '';
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

/** Where a container's counters are (fixed while its init runs). */
interface CounterFiles {
  /** memory.events (v2) or memory.oom_control (v1): both count `oom_kill`. */
  memoryEvents: string;
  pidsEvents: string;
}

function findCounterFiles(pid: number): CounterFiles {
  const dirs = cgroupDirs(pid);
  const memory = dirs.get('memory');
  const unified = dirs.get('');
  return {
    memoryEvents:
      memory === undefined
        ? join(unified ?? '', 'memory.events')
        : join(memory, 'memory.oom_control'),
    pidsEvents: join(dirs.get('pids') ?? unified ?? '', 'pids.events'),
  };
}

function readCounters(files: CounterFiles): LimitCounters {
  const memoryEvents = readOrUndefined(files.memoryEvents);
  const pidsEvents = readOrUndefined(files.pidsEvents);
  return {
    oomKills: counter(memoryEvents, 'oom_kill'),
    forkRefusals: counter(pidsEvents, 'max'),
  };
}

/** Reads the OOM-kill and refused-fork counters of the container whose init is `pid`. */
export function readLimitCounters(pid: number): LimitCounters {
  return readCounters(findCounterFiles(pid));
}

const highest = (a: LimitCounters, b: LimitCounters): LimitCounters => ({
  oomKills: Math.max(a.oomKills, b.oomKills),
  forkRefusals: Math.max(a.forkRefusals, b.forkRefusals),
});

/** A running container, as the ledger knows it: its id and its init's host pid. */
export interface WatchedContainer {
  id: string;
  pid: number;
}

/**
 * Each container's limit counters: where they are (looked up once per container and init),
 * and what they stood at when last reported, so that a limit hit by a background process after
 * its run ended is reported with the session's next run, and no growth is reported twice (by
 * two runs at once).
 */
export class LimitLedger {
  /** By container id and init pid: a restart, or a pid taken by another init, is a new key. */
  private readonly files = new Map<string, CounterFiles>();
  private readonly reported = new Map<string, LimitCounters>();

  /** `maxContainers`: a node's containers come and go; this many are remembered. */
  constructor(private readonly maxContainers = 4096) {}

  /** The container's counters now. */
  read(container: WatchedContainer): LimitCounters {
    const key = `${container.id}:${container.pid}`;
    let files = this.files.get(key);
    if (files === undefined) {
      if (this.files.size >= this.maxContainers) this.files.clear();
      files = findCounterFiles(container.pid);
      this.files.set(key, files);
    }
    return readCounters(files);
  }

  /** Where a run starts counting from: the last report, else the counters now. */
  baseline(container: WatchedContainer): LimitCounters {
    return this.reported.get(container.id) ?? this.read(container);
  }

  /**
   * Where a run that started at `baseline` must count from at its end (another run may have
   * reported since), and `after` recorded as reported.
   */
  settle(container: string, baseline: LimitCounters, after: LimitCounters): LimitCounters {
    const from = highest(baseline, this.reported.get(container) ?? baseline);
    if (!this.reported.has(container) && this.reported.size >= this.maxContainers) {
      this.reported.clear();
    }
    this.reported.set(container, highest(from, after));
    return from;
  }
}

/** Whether the filesystem at `path` has no room left (blocks or inodes). */
export function isFull(path: string): { full: boolean; sizeMb: number } {
  // The file system's counters, kept in memory: read at once, as the counters above.
  const stats = statfsSync(path);
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
