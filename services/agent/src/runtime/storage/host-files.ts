import { open, readFile, stat, type FileHandle } from 'node:fs/promises';
import { hostCommands } from '../host-commands';

/** Host commands go through the agent's helper shells: no fork of the agent (host-commands.ts). */
export const run = (file: string, args: string[]): Promise<string> =>
  hostCommands.run([file, ...args]);

/**
 * Runs `work` on the file at `path`, opened to read (`r`) or written anew (`w`: readable and
 * writable by its owner only), and closes it whatever happens.
 */
export async function withFile<T>(
  path: string,
  flags: 'r' | 'w',
  work: (file: FileHandle) => Promise<T>,
): Promise<T> {
  const file = await open(path, flags, 0o600);
  try {
    return await work(file);
  } finally {
    await file.close();
  }
}

/** Flushes a file's data, or a directory's entries, to disk. */
export function syncPath(path: string): Promise<void> {
  return withFile(path, 'r', (file) => file.sync());
}

/** A new file of `bytes` holes, readable and writable by its owner only. */
export function sparseFile(path: string, bytes: number): Promise<void> {
  return withFile(path, 'w', async (file) => {
    await file.chmod(0o600); // whatever an older file of that name had
    await file.truncate(bytes);
  });
}

export function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** Whether a filesystem is mounted at exactly `path`. */
export async function isMounted(path: string): Promise<boolean> {
  const mounts = await readFile('/proc/self/mounts', 'utf8');
  return mounts.split('\n').some((line) => line.split(' ')[1] === path);
}
