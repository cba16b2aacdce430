import { lstat, realpath, rename, rm, rmdir, unlink } from 'node:fs/promises';
import { posix } from 'node:path';
import type {
  FileStat,
  FileType,
  MadeDirectory,
  RemovedFile,
  RenamedFile,
} from '@sandbox/contract';
import type { Stats } from 'node:fs';
import { asDiskFull } from './files';
import { RunnerError } from './protocol';
import { lexicalPath, makeDirectories, resolveExisting, WORKSPACE } from './workspace-path';

/*
 * Stat, remove, rename and mkdir (issue 42). Each acts on the entry a path names, never on what
 * a symlink there points to: the directories on the way are resolved, and refused when a
 * symlink takes them out of the workspace; the last name is taken as it is (a symlink is
 * stat'ed, removed or renamed itself). So a link to /etc lets none of them reach /etc.
 */

function invalid(path: string, why: string): RunnerError {
  return new RunnerError('invalid_path', `Invalid path "${path}": ${why}`, { path });
}

function notFound(path: string): RunnerError {
  return new RunnerError('file_not_found', `No such file or directory: ${path}`, { path });
}

function code(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException).code;
}

/** `path` relative to the workspace, normalised ("" for the workspace itself). */
function relativeOf(path: string, root: string): string {
  return posix.relative(root, lexicalPath(path, root));
}

/**
 * The absolute path of the entry `path` names: its directory resolved (inside the workspace,
 * else invalid_path; missing: file_not_found), its last name not followed. The workspace
 * itself for "" or ".".
 */
export async function entryPath(path: string, root = WORKSPACE): Promise<string> {
  const lexical = lexicalPath(path, root);
  if (lexical === root) return realpath(root);
  const parent = posix.relative(root, posix.dirname(lexical));
  const dir = await resolveExisting(parent, root).catch((err: unknown) => {
    const missing =
      (err instanceof RunnerError && err.code === 'file_not_found') || code(err) === 'ENOTDIR';
    throw missing ? notFound(path) : err;
  });
  return posix.join(dir, posix.basename(lexical));
}

/** lstat of an entry; a missing one (or one under a file) is file_not_found. */
async function lstatEntry(entry: string, path: string): Promise<Stats> {
  try {
    return await lstat(entry);
  } catch (err) {
    if (code(err) === 'ENOENT' || code(err) === 'ENOTDIR') throw notFound(path);
    throw err;
  }
}

function typeOf(info: Stats): FileType {
  if (info.isFile()) return 'file';
  if (info.isDirectory()) return 'directory';
  if (info.isSymbolicLink()) return 'symlink';
  return 'other';
}

/** What the entry `path` names is (a symlink is described itself, not followed). */
export async function statEntry(path: string, root = WORKSPACE): Promise<FileStat> {
  const info = await lstatEntry(await entryPath(path, root), path);
  return {
    path: relativeOf(path, root),
    type: typeOf(info),
    size: info.size,
    modified: info.mtime.toISOString(),
    mode: info.mode & 0o7777,
  };
}

/**
 * Removes a file, a symlink (not its target) or a directory: an empty one, or with
 * `recursive` one and everything under it (symlinks inside removed, never followed). The
 * workspace itself is refused.
 */
export async function removeEntry(
  path: string,
  recursive: boolean,
  root = WORKSPACE,
): Promise<RemovedFile> {
  const relative = relativeOf(path, root);
  if (relative === '') throw invalid(path, 'is the workspace itself');
  const entry = await entryPath(path, root);
  const info = await lstatEntry(entry, path);
  if (!info.isDirectory()) {
    await unlink(entry);
  } else if (recursive) {
    await rm(entry, { recursive: true });
  } else {
    await rmdir(entry).catch((err: unknown) => {
      if (code(err) !== 'ENOTEMPTY' && code(err) !== 'EEXIST') throw err;
      throw new RunnerError(
        'directory_not_empty',
        `The directory "${relative}" is not empty (remove it with recursive)`,
        { path: relative },
      );
    });
  }
  return { path: relative };
}

/** rename(2)'s refusals, as what they mean for the caller. */
function renameError(err: unknown, from: string, to: string): unknown {
  switch (code(err)) {
    case 'ENOTEMPTY':
    case 'EEXIST':
      return new RunnerError('directory_not_empty', `The directory "${to}" is not empty`, {
        path: to,
      });
    case 'EINVAL':
      return invalid(to, `a directory cannot move into itself ("${from}")`);
    case 'EISDIR':
      return invalid(to, 'is a directory, and what moves there is not');
    case 'ENOTDIR':
      return invalid(to, 'is not a directory, and what moves there is one');
    default:
      return err;
  }
}

/**
 * Moves the entry `from` names (a symlink itself) to `to`, making `to`'s parent directories.
 * An existing `to` is 409 file_exists, unless `overwrite`: then it is replaced (a file, a
 * symlink or an empty directory, as rename(2) does; a non-empty one is directory_not_empty).
 */
export async function renameEntry(
  from: string,
  to: string,
  overwrite: boolean,
  root = WORKSPACE,
): Promise<RenamedFile> {
  const moved = { from: relativeOf(from, root), to: relativeOf(to, root) };
  if (moved.from === '') throw invalid(from, 'is the workspace itself');
  if (moved.to === '') throw invalid(to, 'is the workspace itself');
  const source = await entryPath(from, root);
  await lstatEntry(source, from);
  const created: string[] = [];
  try {
    const target = lexicalPath(to, root);
    const dir = await makeDirectories(to, posix.dirname(target), root, created);
    const destination = posix.join(dir, posix.basename(target));
    const existing = await lstat(destination).catch(() => undefined);
    if (existing !== undefined && !overwrite && destination !== source) {
      throw new RunnerError('file_exists', `"${moved.to}" exists (rename with overwrite)`, {
        path: moved.to,
      });
    }
    await rename(source, destination).catch((err: unknown) => {
      throw renameError(err, moved.from, moved.to);
    });
  } catch (err) {
    for (const made of created.reverse()) await rmdir(made).catch(() => undefined);
    throw await asDiskFull(err, root);
  }
  return moved;
}

/**
 * Makes a directory and its parents (never through a symlink out of the workspace); an
 * existing directory is fine (`created` false), an existing file is invalid_path.
 */
export async function makeDirectory(path: string, root = WORKSPACE): Promise<MadeDirectory> {
  const relative = relativeOf(path, root);
  const created: string[] = [];
  try {
    await makeDirectories(path, lexicalPath(path, root), root, created);
  } catch (err) {
    throw await asDiskFull(err, root);
  }
  return { path: relative, created: created.length > 0 };
}
