import { lstatSync, mkdirSync, realpathSync, type Stats } from 'node:fs';
import { lstat, readlink, realpath } from 'node:fs/promises';
import { posix } from 'node:path';
import { RunnerError } from './protocol';

export const WORKSPACE = '/workspace';
/** Linux's NAME_MAX and (less the workspace prefix) PATH_MAX. */
const MAX_NAME_BYTES = 255;
const MAX_PATH_BYTES = 4000;

function invalid(path: string, why: string): RunnerError {
  return new RunnerError('invalid_path', `Invalid path "${path}": ${why}`, { path });
}

/** What a failed file system call on a user's path means to the user. */
const PATH_ERRORS: Record<string, string> = {
  ENOENT: 'does not exist',
  ENOTDIR: 'a part of it is not a directory',
  EISDIR: 'is a directory',
  EEXIST: 'already exists',
  ELOOP: 'too many levels of symlinks',
  ENAMETOOLONG: 'name too long',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
};

/**
 * A file system error on a workspace path as 400 invalid_path (its path relative to the
 * workspace in `details.path`); any other error as it is.
 */
export function asPathError(err: unknown, root = WORKSPACE): unknown {
  const { code, path, syscall } = err as NodeJS.ErrnoException;
  const why = typeof code === 'string' ? PATH_ERRORS[code] : undefined;
  if (why === undefined || syscall === undefined || syscall.startsWith('spawn')) return err;
  const relative =
    typeof path === 'string' && inside(root, path) ? posix.relative(root, path) : undefined;
  return new RunnerError(
    'invalid_path',
    `Invalid path${relative === undefined ? '' : ` "${relative}"`}: ${why}`,
    relative === undefined ? undefined : { path: relative },
  );
}

function inside(root: string, candidate: string): boolean {
  return candidate === root || candidate.startsWith(root + '/');
}

/**
 * The absolute path of `path` (relative to the workspace), refusing absolute paths, NUL bytes
 * and `..` that leaves the workspace. Symlinks are checked by `resolveExisting`/`prepareParent`.
 */
export function lexicalPath(path: string, root = WORKSPACE): string {
  if (typeof path !== 'string') throw invalid(String(path), 'not a string');
  if (path.includes('\0')) throw invalid(path, 'contains a NUL byte');
  if (posix.isAbsolute(path)) throw invalid(path, 'must be relative to /workspace');
  if (path.split('/').some((part) => Buffer.byteLength(part) > MAX_NAME_BYTES)) {
    throw invalid(path, `a name is longer than ${MAX_NAME_BYTES} bytes`);
  }
  if (Buffer.byteLength(path) > MAX_PATH_BYTES) {
    throw invalid(path, `longer than ${MAX_PATH_BYTES} bytes`);
  }
  const resolved = posix.resolve(root, path);
  if (!inside(root, resolved)) throw invalid(path, 'leaves /workspace');
  return resolved;
}

/** Like `lexicalPath` but accepts `/workspace/...` too (for working directories). */
export function lexicalDir(path: string, root = WORKSPACE): string {
  if (posix.isAbsolute(path)) {
    if (path.includes('\0')) throw invalid(path, 'contains a NUL byte');
    const resolved = posix.resolve(path);
    if (!inside(root, resolved)) throw invalid(path, 'must be inside /workspace');
    return resolved;
  }
  return lexicalPath(path, root);
}

/** Whether a symlink on the way to `lexical` (existing or dangling) points out of `root`. */
async function leadsOutside(lexical: string, root: string): Promise<boolean> {
  const realRoot = await realpath(root);
  let current = realRoot;
  for (const part of posix.relative(root, lexical).split('/').filter(Boolean)) {
    const next = posix.join(current, part);
    const info = await lstat(next).catch(() => undefined);
    if (info === undefined) return false;
    if (!info.isSymbolicLink()) {
      current = next;
      continue;
    }
    const target = posix.resolve(current, await readlink(next));
    const real = await realpath(target).catch(() => target); // dangling: where it points
    if (!inside(realRoot, real)) return true;
    current = real;
  }
  return false;
}

/** The real path of an existing entry; refused when a symlink takes it out of the workspace. */
export async function resolveExisting(path: string, root = WORKSPACE): Promise<string> {
  const lexical = lexicalPath(path, root);
  let real: string;
  try {
    real = await realpath(lexical);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    // Missing behind a symlink that leads out is refused as an existing file would be: what
    // exists outside the workspace is not for the sandbox to learn.
    if (await leadsOutside(lexical, root)) {
      throw invalid(path, 'a symlink leads outside /workspace');
    }
    throw new RunnerError('file_not_found', `No such file: ${path}`, { path });
  }
  if (!inside(await realpath(root), real))
    throw invalid(path, 'a symlink leads outside /workspace');
  return real;
}

/**
 * Creates the directories down to `dir` (absolute, lexically inside `root`) one by one, never
 * following a symlink out of the workspace; returns the real path of `dir`. The directories it
 * made are added to `created`. `path` is what the user asked for, for the errors.
 */
// eslint-disable-next-line @typescript-eslint/require-await -- its errors are rejections
export async function makeDirectories(
  path: string,
  dir: string,
  root = WORKSPACE,
  created: string[] = [],
): Promise<string> {
  return makeDirectoriesNow(path, dir, root, created);
}

function lstatOrNothing(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined; // made next (mkdir tells why it cannot be)
  }
}

/**
 * makeDirectories, in this turn: a few metadata calls on the session's own disk, done here
 * rather than each by a thread of the pool and a wake-up of this one (every run makes its
 * working directory).
 */
function makeDirectoriesNow(path: string, dir: string, root: string, created: string[]): string {
  const realRoot = realpathSync.native(root);
  const parts = posix.relative(root, dir).split('/').filter(Boolean);
  let current = realRoot;
  for (const part of parts) {
    const next = posix.join(current, part);
    const info = lstatOrNothing(next);
    if (info === undefined) {
      mkdirSync(next);
      created.push(next);
      current = next;
    } else if (info.isSymbolicLink()) {
      let real: string;
      try {
        real = realpathSync.native(next);
      } catch {
        throw invalid(path, 'a symlink on the way is broken');
      }
      if (!inside(realRoot, real)) throw invalid(path, 'a symlink leads outside /workspace');
      current = real;
    } else if (info.isDirectory()) {
      current = next;
    } else {
      throw invalid(path, `"${part}" is not a directory`);
    }
  }
  return current;
}

/**
 * Creates the parent directories of `path` one by one, never following a symlink out of the
 * workspace, and returns the absolute target path (which may itself not exist yet). The
 * directories it made are added to `created`, in the order they were made.
 */
export async function prepareParent(
  path: string,
  root = WORKSPACE,
  created: string[] = [],
): Promise<string> {
  if (path.endsWith('/')) throw invalid(path, 'names a directory');
  const target = lexicalPath(path, root);
  if (target === root) throw invalid(path, 'is the workspace itself');
  const realRoot = await realpath(root);
  const current = await makeDirectories(path, posix.dirname(target), root, created);
  const final = posix.join(current, posix.basename(target));
  const info = await lstat(final).catch(() => undefined);
  if (info?.isSymbolicLink()) {
    const real = await realpath(final).catch(() => undefined);
    if (real === undefined || !inside(realRoot, real)) {
      throw invalid(path, 'a symlink leads outside /workspace');
    }
    return real;
  }
  if (info?.isDirectory()) throw invalid(path, 'is a directory');
  return final;
}
