import { randomBytes } from 'node:crypto';
import { constants, fstatSync, futimesSync, lstatSync, readdirSync, type Dirent } from 'node:fs';
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { CODE_FILE_PREFIX } from './code-file';
import { WORKSPACE } from './workspace-path';

/*
 * What a code run or a code context's cell wrote. The front finds what command runs wrote
 * alike (front/files.go; ADR 47).
 */

const MAX_SCANNED = 20_000;
/** Entries looked at between two turns of the runner's event loop. */
const YIELD_EVERY = 2_000;

/** Whether the file's inode changed at or after `since`; not if it is gone or unreadable. */
function changedAt(path: string, since: bigint): boolean {
  try {
    return lstatSync(path, { bigint: true }).ctimeNs >= since;
  } catch {
    return false;
  }
}

function readdirOrNothing(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return []; // gone or unreadable: nothing of it is reported
  }
}

/**
 * The kernel's clock for inode changes: the change time (ctime) the kernel gives a file it
 * changes now. The kernel stamps files from a coarse clock (a tick of a few ms behind the time
 * a process reads), so a file a run changes is stamped no earlier than a reading taken at its
 * start, whatever time the process itself would read.
 *
 * One marker file, opened once and kept open (it works on even if its path is removed): each
 * reading sets its times, which stamps its change time, and reads that back. Two calls on an
 * open file, where a file made and removed for each run cost six, and an inode on the disk.
 * The marker is a new file of a name no one can guess, in `dir`: a user who shares the
 * runner's directory cannot have it open something else (a FIFO would block it).
 */
export class ChangeClock {
  private marker: Promise<FileHandle> | undefined;

  constructor(private readonly dir: string) {}

  async read(): Promise<bigint> {
    this.marker ??= this.openMarker().catch((err: unknown) => {
      this.marker = undefined; // the next reading tries again
      throw err;
    });
    const { fd } = await this.marker;
    // Two calls on an open file, each far shorter than a hand-off to the thread pool.
    const now = new Date();
    futimesSync(fd, now, now);
    return fstatSync(fd, { bigint: true }).ctimeNs;
  }

  /**
   * The marker, its directory made first: a context's first cell can come before any code run
   * or zygote made it (the front's clock makes it too), and then failed as `invalid_path`.
   */
  private async openMarker(): Promise<FileHandle> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const path = join(this.dir, `change-clock-${randomBytes(8).toString('hex')}`);
    const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = constants;
    return open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
  }

  async close(): Promise<void> {
    const marker = this.marker;
    this.marker = undefined;
    await (await marker?.catch(() => undefined))?.close();
  }
}

/**
 * The files under `dir` (node_modules and the runner's code files left out) whose inode
 * changed at or after `since` (a `ChangeClock` reading), relative to the workspace, sorted:
 * what a run created, wrote, renamed in or chmod'ed, including files given an old mtime
 * (`tar -x`, `cp -p`), which no one can backdate the change time of. One walk after the run,
 * none before it, in the runner's own turns (see below).
 */
export async function changedSince(dir: string, since: bigint): Promise<string[]> {
  const paths: string[] = [];
  const queue = [dir];
  let scanned = 0;
  let sinceYield = 0;
  while (queue.length > 0 && scanned < MAX_SCANNED) {
    // Metadata calls in this turn (cheaper than a hand-off to the thread pool each), with a
    // turn for the runner's other work every YIELD_EVERY entries of a large tree.
    if (sinceYield >= YIELD_EVERY) {
      sinceYield = 0;
      await new Promise((resolve) => setImmediate(resolve));
    }
    const current = queue.shift() as string;
    const entries = readdirOrNothing(current);
    scanned += entries.length;
    sinceYield += entries.length;
    const files: string[] = [];
    for (const entry of entries) {
      const full = posix.join(current, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules') queue.push(full);
      } else if (entry.isFile() && !entry.name.startsWith(CODE_FILE_PREFIX)) {
        files.push(full);
      }
    }
    for (const full of files) {
      if (changedAt(full, since)) paths.push(posix.relative(WORKSPACE, full));
    }
  }
  return paths.sort();
}
