import { closeSync, openSync, readFileSync, readSync, statfsSync } from 'node:fs';
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
 * read costs less than a trip through the thread pool, of which a `readFile` takes four. A
 * run's counters are read from files kept open instead (see CounterFile).
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
export interface CounterFiles {
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
  return countersOf(readOrUndefined(files.memoryEvents), readOrUndefined(files.pidsEvents));
}

function countersOf(memoryEvents: string | undefined, pidsEvents: string | undefined) {
  return { oomKills: counter(memoryEvents, 'oom_kill'), forkRefusals: counter(pidsEvents, 'max') };
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

/** Room for any counter file read here (a few short lines). */
const readBuffer = Buffer.alloc(4096);

/**
 * A kernel counter file kept open: each read is one `pread` from its start (the kernel makes
 * the text anew), where a `readFileSync` is an open, an `fstat`, two reads and a close (17 µs
 * for a run's two files on this machine, 2.6 µs so). A read that fails (the cgroup was removed:
 * ENODEV) opens the path again once, as a container made again under it would need; a path
 * that cannot be read counts nothing, as before.
 */
class CounterFile {
  private fd: number | undefined;

  constructor(private readonly path: string) {}

  read(): string | undefined {
    if (this.fd !== undefined) {
      const text = this.readOpen();
      if (text !== undefined) return text;
    }
    try {
      this.fd = openSync(this.path, 'r');
    } catch {
      return undefined;
    }
    return this.readOpen();
  }

  private readOpen(): string | undefined {
    try {
      const size = readSync(this.fd as number, readBuffer, 0, readBuffer.length, 0);
      return readBuffer.toString('latin1', 0, size);
    } catch {
      this.close();
      return undefined;
    }
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

/** One container's counter files, as opened for its init `pid`. */
interface OpenCounters {
  pid: number;
  memoryEvents: CounterFile;
  pidsEvents: CounterFile;
}

/** Containers whose counter files are kept open at once (two descriptors each). */
export const OPEN_COUNTERS_MAX = 256;

/**
 * Each container's limit counters: their files (found once per container and init, and kept
 * open until the container ends: see `forget`), and what they stood at when last reported, so
 * that a limit hit by a background process after its run ended is reported with the session's
 * next run, and no growth is reported twice (by two runs at once).
 */
export class LimitLedger {
  /** By container id, in the order first read (the oldest is closed past the bound). */
  private readonly open = new Map<string, OpenCounters>();
  private readonly reported = new Map<string, LimitCounters>();

  /**
   * `maxContainers`: a node's containers come and go; this many reports are remembered.
   * `locate`: where a container's counters are, from its init's pid (tests give their own).
   */
  constructor(
    private readonly maxContainers = 4096,
    private readonly locate: (pid: number) => CounterFiles = findCounterFiles,
    private readonly maxOpen = OPEN_COUNTERS_MAX,
  ) {}

  /** The container's counters now. */
  read(container: WatchedContainer): LimitCounters {
    let files = this.open.get(container.id);
    if (files?.pid !== container.pid) {
      // A new container, or one restarted (its cgroup may be another): found again.
      this.forget(container.id);
      if (this.open.size >= this.maxOpen) this.forget(this.open.keys().next().value as string);
      const paths = this.locate(container.pid);
      files = {
        pid: container.pid,
        memoryEvents: new CounterFile(paths.memoryEvents),
        pidsEvents: new CounterFile(paths.pidsEvents),
      };
      this.open.set(container.id, files);
    }
    return countersOf(files.memoryEvents.read(), files.pidsEvents.read());
  }

  /** The container ended (or is gone): its files are closed; its last report is kept. */
  forget(containerId: string): void {
    const files = this.open.get(containerId);
    if (files === undefined) return;
    this.open.delete(containerId);
    files.memoryEvents.close();
    files.pidsEvents.close();
  }

  /** Containers whose counter files are open now. */
  get openCount(): number {
    return this.open.size;
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
