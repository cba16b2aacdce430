import { open, readFile, stat } from 'node:fs/promises';
import { hostCommands } from '../host-commands';

/** Host commands go through the agent's helper shells: no fork of the agent (host-commands.ts). */
export const run = (file: string, args: string[]): Promise<string> =>
  hostCommands.run([file, ...args]);

/** A new file of `bytes` holes, readable and writable by its owner only. */
export async function sparseFile(path: string, bytes: number): Promise<void> {
  const file = await open(path, 'w', 0o600);
  try {
    await file.chmod(0o600); // whatever an older file of that name had
    await file.truncate(bytes);
  } finally {
    await file.close();
  }
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
