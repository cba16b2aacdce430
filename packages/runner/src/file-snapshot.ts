import { lstat, readdir, rm, writeFile } from 'node:fs/promises';
import { posix } from 'node:path';
import { CODE_FILE_PREFIX } from './code-file';
import { WORKSPACE } from './workspace-path';

const MAX_SCANNED = 20_000;

/**
 * The kernel's clock for inode changes, read at the start of a run: the change time (ctime) of
 * a file made now at `markerPath`. The kernel stamps files from a coarse clock (a tick of a few
 * ms behind the time a process reads), so a file the run changes is stamped no earlier than
 * this, whatever time the process itself would read.
 */
export async function changeClock(markerPath: string): Promise<bigint> {
  await writeFile(markerPath, '', { mode: 0o600 });
  try {
    return (await lstat(markerPath, { bigint: true })).ctimeNs;
  } finally {
    await rm(markerPath, { force: true });
  }
}

/**
 * The files under `dir` (node_modules and the runner's code files left out) whose inode
 * changed at or after `since` (a `changeClock` reading), relative to the workspace, sorted:
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
