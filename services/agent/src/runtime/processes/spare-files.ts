import { closeSync, ftruncate, lstatSync, mkdirSync, openSync, readdirSync } from 'node:fs';
import { renameSync, rmSync } from 'node:fs';
import { constants } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Spare files kept at the most (empty: an inode and a name each): past it, a file given back
 * is removed. 60 sessions of 32 logs, and then some.
 */
export const SPARE_FILES_MAX = 4096;

/** A spare's name: made empty (`spare-`), or emptied once here (`emptying-`, see giveFull). */
const SPARE_FILE = /^(?:spare|emptying)-(\d+)$/;
/**
 * A file being emptied here (see giveFull), handed out only once empty; at start, one a crash
 * left is kept only if empty, as every file found here.
 */
const EMPTYING_PREFIX = 'emptying-';

/**
 * Empty files the node's run logs hand on instead of making and removing one per run: a new
 * file costs an inode, and on ext4 without a journal finding a free one scans past every
 * inode freed in the last minutes (`recently_deleted`), which with 60 sessions running `echo`
 * after others had ended was a quarter of the agent's CPU. A removed log's newest segment is
 * emptied and given here (`give`); a new log takes one (`take`) and renames it to its name.
 * The node also makes spares ahead of need in its quiet moments (`make`, ProcessLogs'
 * `stockSpares`), so that a burst of runs in new sessions makes no file either.
 *
 * Only empty regular files ever enter (the giver empties them first, and a file found here at
 * start that is not one is removed), so no byte of one session's output reaches another's log.
 */
export class SpareFiles {
  private readonly files: string[] = [];
  private counter = 0;

  constructor(
    private readonly dir: string,
    private readonly max = SPARE_FILES_MAX,
  ) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      const stat = lstatSync(path, { throwIfNoEntry: false });
      const number = SPARE_FILE.exec(name)?.[1];
      const usable = number !== undefined && stat?.isFile() === true && stat.size === 0;
      if (usable && this.files.length < this.max) {
        this.files.push(path);
        this.counter = Math.max(this.counter, Number(number));
      } else {
        rmSync(path, { recursive: true, force: true });
      }
    }
  }

  get count(): number {
    return this.files.length;
  }

  /** A spare file's path, now the caller's to rename (undefined: none left). */
  take(): string | undefined {
    return this.files.pop();
  }

  /** Makes one more spare: a new empty file, the agent's alone (removed when the pool is at its bound). */
  async make(): Promise<void> {
    const path = this.nextName();
    // Never an existing file's (`wx`: made here, or failing).
    await (await open(path, 'wx', 0o600)).close();
    if (this.files.length < this.max) this.files.push(path);
    else await rm(path, { force: true });
  }

  /** Keeps the emptied file at `path` (removes it when there are enough, or it cannot move). */
  give(path: string): void {
    if (this.files.length >= this.max) {
      rmSync(path, { force: true });
      return;
    }
    const spare = this.nextName();
    try {
      renameSync(path, spare);
      this.files.push(spare);
    } catch {
      rmSync(path, { force: true });
    }
  }

  /**
   * Keeps the file at `path`, which still holds its bytes, off the caller's path: it moves
   * here at once under a name of its own (gone from its log's directory; at the next start a
   * crash left it under, kept only if empty), is emptied in the thread pool (on ext4 a
   * truncate waits on the disk, most of a millisecond here: too long for a run's start), and
   * only then joins the spares, under that name. Resolves when it is kept or removed; never
   * rejects.
   */
  async giveFull(path: string): Promise<void> {
    if (this.files.length >= this.max) {
      rmSync(path, { force: true });
      return;
    }
    this.counter += 1;
    const holding = join(this.dir, `${EMPTYING_PREFIX}${this.counter}`);
    try {
      renameSync(path, holding);
    } catch {
      rmSync(path, { force: true });
      return;
    }
    try {
      // Kept under its holding name: a rename to a spare's would cost one more trip.
      await emptied(holding);
      if (this.files.length < this.max) this.files.push(holding);
      else await rm(holding, { force: true });
    } catch {
      await rm(holding, { force: true }).catch(() => undefined);
    }
  }

  private nextName(): string {
    this.counter += 1;
    return join(this.dir, `spare-${this.counter}`);
  }
}

/**
 * Empties the file at `path` (never through a link): opened here (no truncate: an open costs a
 * few microseconds), truncated in the thread pool (on ext4 a truncate of a file whose data was
 * written out waits on the disk, most of a millisecond), closed here once that is done. One trip
 * to the pool, not two (an open that truncates, then its close: each trip costs the loop and a
 * pool thread a wake-up, about 15 µs of CPU per file measured on this machine) nor four (open,
 * truncate, close, rename). Through fs's callbacks, not fs/promises (a FileHandle's making and
 * closing cost more of the agent's loop than the steps themselves).
 */
function emptied(path: string): Promise<void> {
  const { O_WRONLY, O_NOFOLLOW } = constants;
  return new Promise((resolve, reject) => {
    const fd = openSync(path, O_WRONLY | O_NOFOLLOW);
    ftruncate(fd, 0, (truncateErr) => {
      try {
        closeSync(fd);
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
        return;
      }
      if (truncateErr === null) resolve();
      else reject(truncateErr);
    });
  });
}
