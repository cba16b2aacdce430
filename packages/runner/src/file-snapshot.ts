import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, open, readdir, type FileHandle } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { CODE_FILE_PREFIX } from './code-file';
import { WORKSPACE } from './workspace-path';

const MAX_SCANNED = 20_000;

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
    const marker = await this.marker;
    const now = new Date();
    await marker.utimes(now, now);
    return (await marker.stat({ bigint: true })).ctimeNs;
  }

  private openMarker(): Promise<FileHandle> {
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
 * none before it; the entries of a directory are looked at together.
 */
export async function changedSince(dir: string, since: bigint): Promise<string[]> {
  const paths: string[] = [];
  const queue = [dir];
  let scanned = 0;
  while (queue.length > 0 && scanned < MAX_SCANNED) {
    const current = queue.shift() as string;
    const entries = await readdir(current, { withFileTypes: true }).catch(() => []);
    scanned += entries.length;
    const files: string[] = [];
    for (const entry of entries) {
      const full = posix.join(current, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules') queue.push(full);
      } else if (entry.isFile() && !entry.name.startsWith(CODE_FILE_PREFIX)) {
        files.push(full);
      }
    }
    const changes = await Promise.all(
      files.map((full) =>
        lstat(full, { bigint: true }).then(
          (info) => info.ctimeNs >= since,
          () => false,
        ),
      ),
    );
    files.forEach((full, i) => {
      if (changes[i] === true) paths.push(posix.relative(WORKSPACE, full));
    });
  }
  return paths.sort();
}
