import { randomBytes } from 'node:crypto';
import { lstat, open, readdir, realpath, rename, rm, rmdir, stat, statfs } from 'node:fs/promises';
import { posix } from 'node:path';
import { Readable } from 'node:stream';
import type { FileEntry, FileListing } from '@sandbox/contract';
import { RunnerError, type FileInput } from './protocol';
import { lexicalDir, prepareParent, resolveExisting, WORKSPACE } from './workspace-path';

/** used/limit of the workspace's filesystem, for disk_full errors. */
export async function diskUsage(root = WORKSPACE): Promise<{ used: number; limit: number }> {
  const fs = await statfs(root);
  return { used: (fs.blocks - fs.bfree) * fs.bsize, limit: fs.blocks * fs.bsize };
}

/** A full disk (ENOSPC, EDQUOT) as the disk_full error; any other error as it is. */
export async function asDiskFull(err: unknown, root = WORKSPACE): Promise<unknown> {
  if (
    (err as NodeJS.ErrnoException).code === 'ENOSPC' ||
    (err as NodeJS.ErrnoException).code === 'EDQUOT'
  ) {
    return new RunnerError('disk_full', 'The session disk is full', await diskUsage(root));
  }
  return err;
}

interface Staged {
  path: string;
  temp: string;
  target: string;
  size: number;
}

async function stage(file: FileInput, root: string, created: string[]): Promise<Staged> {
  const target = await prepareParent(file.path, root, created);
  // Short, whatever the target's name: a name of 255 bytes must still get its temporary file.
  const temp = posix.join(posix.dirname(target), `.sbx-${randomBytes(6).toString('hex')}.tmp`);
  const bytes = Buffer.from(file.content, 'base64');
  // A replaced file keeps its mode (an executable script stays executable).
  const mode = ((await stat(target).catch(() => undefined))?.mode ?? 0o644) & 0o7777;
  const handle = await open(temp, 'wx', 0o600);
  try {
    await handle.writeFile(bytes);
    await handle.chmod(mode);
    await handle.sync();
  } catch (err) {
    await handle.close();
    await rm(temp, { force: true });
    throw err;
  }
  await handle.close();
  return { path: file.path, temp, target, size: bytes.length };
}

/** Refuses a request that names a path both as a file and as a directory (`a` and `a/b`). */
function checkNoNesting(files: readonly FileInput[]): void {
  const paths = new Set(files.map((f) => posix.normalize(f.path)));
  for (const path of paths) {
    for (let dir = posix.dirname(path); dir !== '.' && dir !== '/'; dir = posix.dirname(dir)) {
      if (paths.has(dir)) {
        throw new RunnerError(
          'invalid_path',
          `"${dir}" is written as a file and used as a directory`,
          {
            path: dir,
          },
        );
      }
    }
  }
}

/**
 * Writes every file or none: all are written to temporary files beside their targets first,
 * then renamed into place. A failure (bad path, full disk) removes every temporary file and
 * every directory made on the way.
 */
export async function writeFiles(
  files: readonly FileInput[],
  root = WORKSPACE,
): Promise<{ path: string; size: number }[]> {
  checkNoNesting(files);
  const staged: Staged[] = [];
  const created: string[] = [];
  try {
    for (const file of files) staged.push(await stage(file, root, created));
  } catch (err) {
    await Promise.all(staged.map((s) => rm(s.temp, { force: true })));
    for (const dir of created.reverse()) await rmdir(dir).catch(() => undefined);
    throw await asDiskFull(err, root);
  }
  for (const [index, s] of staged.entries()) {
    await rename(s.temp, s.target).catch(async (err: unknown) => {
      await Promise.all(staged.slice(index).map((left) => rm(left.temp, { force: true })));
      throw err;
    });
  }
  return staged.map((s) => ({ path: s.path, size: s.size }));
}

/**
 * Opens a workspace file for reading: its size now, and a stream of at most that many bytes
 * (a file growing meanwhile is cut there, so that the size announced stays true).
 */
export async function openFile(
  path: string,
  root = WORKSPACE,
): Promise<{ size: number; stream: Readable }> {
  const real = await resolveExisting(path, root);
  const info = await lstat(real);
  if (!info.isFile()) throw new RunnerError('invalid_path', `Not a file: ${path}`, { path });
  // Opened now, so that a file it may not read is refused before its size is announced.
  const handle = await open(real, 'r');
  if (info.size === 0) {
    await handle.close();
    return { size: 0, stream: Readable.from([]) };
  }
  const stream = handle.createReadStream({ highWaterMark: 256 * 1024, end: info.size - 1 });
  return { size: info.size, stream };
}

/** Most files a listing walks; past this, `total` counts only what it saw. */
export const MAX_LISTED_FILES = 100_000;
/** Most bytes of entries in one listing (a page then holds fewer files than asked for). */
const MAX_LISTING_BYTES = 4 * 1024 * 1024;

/**
 * One page of every file under `dir` (recursive; files only; symlinks not followed), paths
 * relative to the workspace, sorted by path; `total` counts them all.
 */
export async function listFiles(
  dir: string,
  page: { offset: number; limit: number; maxBytes?: number },
  root = WORKSPACE,
): Promise<FileListing> {
  const realRoot = await realpath(root);
  const start = dir === '' || dir === '.' ? root : lexicalDir(dir, root);
  const real = start === root ? realRoot : await resolveExisting(posix.relative(root, start), root);
  const info = await lstat(real);
  if (!info.isDirectory())
    throw new RunnerError('invalid_path', `Not a directory: ${dir}`, { path: dir });
  const paths: string[] = [];
  let truncated = false;
  const queue = [real];
  while (queue.length > 0 && !truncated) {
    const current = queue.shift() as string;
    for (const entry of await readdir(current, { withFileTypes: true }).catch(() => [])) {
      const full = posix.join(current, entry.name);
      if (entry.isDirectory()) {
        queue.push(full);
      } else if (entry.isFile()) {
        if (paths.length >= MAX_LISTED_FILES) {
          truncated = true;
          break;
        }
        paths.push(posix.relative(realRoot, full));
      }
    }
  }
  paths.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const files: FileEntry[] = [];
  let bytes = 0;
  for (const path of paths.slice(page.offset, page.offset + page.limit)) {
    const stat = await lstat(posix.join(realRoot, path)).catch(() => undefined);
    if (stat === undefined) continue; // removed meanwhile
    // One answer stays well below the agent's longest line (long or odd names inflate it).
    bytes += JSON.stringify(path).length + 100;
    if (bytes > (page.maxBytes ?? MAX_LISTING_BYTES)) break;
    files.push({ path, size: stat.size, modified: stat.mtime.toISOString(), type: 'file' });
  }
  return { files, total: paths.length, truncated };
}
