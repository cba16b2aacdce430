import { lstat, readdir } from 'node:fs/promises';
import { posix } from 'node:path';
import { CODE_FILE_PREFIX } from './code-file';
import { WORKSPACE } from './workspace-path';

const MAX_SCANNED = 20_000;

/** mtimes of the files under a directory, by path. */
export type Snapshot = Map<string, number>;

/** mtimes of files under `dir` (node_modules left out), to tell what a run wrote. */
export async function snapshot(dir: string): Promise<Snapshot> {
  const seen: Snapshot = new Map();
  const queue = [dir];
  while (queue.length > 0 && seen.size < MAX_SCANNED) {
    const current = queue.shift() as string;
    for (const entry of await readdir(current, { withFileTypes: true }).catch(() => [])) {
      const full = posix.join(current, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules') queue.push(full);
      } else if (entry.isFile() && !entry.name.startsWith(CODE_FILE_PREFIX)) {
        const info = await lstat(full).catch(() => undefined);
        if (info !== undefined) seen.set(full, info.mtimeMs);
      }
    }
  }
  return seen;
}

/** The files created or changed between two snapshots, relative to the workspace, sorted. */
export function changed(before: Snapshot, after: Snapshot): string[] {
  const paths: string[] = [];
  for (const [path, mtime] of after) {
    if (before.get(path) !== mtime) paths.push(posix.relative(WORKSPACE, path));
  }
  return paths.sort();
}
