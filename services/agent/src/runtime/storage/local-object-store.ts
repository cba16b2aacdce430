import {
  chmod,
  copyFile,
  mkdir,
  open,
  readFile,
  rename,
  rm,
  unlink,
  writeFile,
} from 'node:fs/promises';
import { join } from 'node:path';
import { AppError } from '@sandbox/errors';
import { syncPath } from './host-files';
import { checkObjectKey, type ObjectStore, type StoredObject } from './object-store';

/** Archives stream in chunks this large (64 KiB, the default, costs more calls per byte). */
const READ_CHUNK_BYTES = 1 << 20;

const isNotFound = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

function failed(action: string, err: unknown): AppError {
  return new AppError('internal_error', `The blob store could not ${action}`, { cause: err });
}

/** Removes the file `path`; false when there was none. */
async function removeFile(path: string): Promise<boolean> {
  try {
    await unlink(path);
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

/**
 * Objects as files of one directory (mode 0700, files 0600), known only to the agent. Each is
 * written to a temporary file, synced and renamed into place, so that a reader sees the whole
 * object or none.
 */
export class LocalObjectStore implements ObjectStore {
  constructor(private readonly dir: string) {}

  private path(key: string): string {
    return join(this.dir, checkObjectKey(key));
  }

  put(key: string, localFile: string): Promise<void> {
    return this.write(key, (temp) => copyFile(localFile, temp));
  }

  /** A rename into place (the staging directory is inside the store's), then the directory synced. */
  async adopt(key: string, localFile: string): Promise<void> {
    const path = this.path(key);
    try {
      await chmod(localFile, 0o600);
      await rename(localFile, path);
      await syncPath(this.dir);
    } catch (err) {
      throw failed('write an object', err);
    }
  }

  putText(key: string, text: string): Promise<void> {
    return this.write(key, (temp) => writeFile(temp, text, { mode: 0o600 }));
  }

  private async write(key: string, fill: (temp: string) => Promise<void>): Promise<void> {
    const path = this.path(key);
    const temp = `${path}.tmp`;
    try {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      await fill(temp);
      await chmod(temp, 0o600);
      await syncPath(temp);
      await rename(temp, path);
      await syncPath(this.dir);
    } catch (err) {
      await rm(temp, { force: true });
      throw failed('write an object', err);
    }
  }

  async read(key: string): Promise<StoredObject | undefined> {
    const path = this.path(key);
    try {
      const handle = await open(path, 'r');
      try {
        const { size } = await handle.stat();
        // `start`: read by position, leaving the file's offset at 0 for a reader of `fd`.
        const body = handle.createReadStream({ start: 0, highWaterMark: READ_CHUNK_BYTES });
        return { size, body, fd: handle.fd };
      } catch (err) {
        await handle.close();
        throw err;
      }
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw failed('read an object', err);
    }
  }

  async getText(key: string): Promise<string | undefined> {
    const path = this.path(key);
    try {
      return await readFile(path, 'utf8');
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw failed('read an object', err);
    }
  }

  async delete(key: string): Promise<void> {
    const path = this.path(key);
    try {
      const removed = await Promise.all([path, `${path}.tmp`].map(removeFile));
      // Deleting what is not there (another format's archive) costs no sync.
      if (removed.includes(true)) await syncPath(this.dir);
    } catch (err) {
      if (isNotFound(err)) return;
      throw failed('delete an object', err);
    }
  }
}
