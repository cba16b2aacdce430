import { lstatSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { constants } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Spare files kept at the most (empty: an inode and a name each): past it, a file given back
 * is removed. 60 sessions of 32 logs, and then some.
 */
export const SPARE_FILES_MAX = 4096;

const SPARE_FILE = /^spare-\d+$/;
/** A file being emptied here (see giveFull): never handed out; one a crash left is removed. */
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
      const usable = SPARE_FILE.test(name) && stat?.isFile() === true && stat.size === 0;
      if (usable && this.files.length < this.max) {
        this.files.push(path);
        this.counter = Math.max(this.counter, Number(name.slice('spare-'.length)));
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
   * here at once under a name never handed out (gone from its log's directory, and removed at
   * the next start if a crash leaves it), is emptied in the thread pool (on ext4 a truncate
   * waits on the disk, most of a millisecond here: too long for a run's start), and only then
   * joins the spares. Resolves when it is kept or removed; never rejects.
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
      const file = await open(holding, constants.O_WRONLY | constants.O_NOFOLLOW);
      try {
        await file.truncate(0);
      } finally {
        await file.close();
      }
      const spare = this.nextName();
      await rename(holding, spare);
      if (this.files.length < this.max) this.files.push(spare);
      else await rm(spare, { force: true });
    } catch {
      await rm(holding, { force: true }).catch(() => undefined);
    }
  }

  private nextName(): string {
    this.counter += 1;
    return join(this.dir, `spare-${this.counter}`);
  }
}
