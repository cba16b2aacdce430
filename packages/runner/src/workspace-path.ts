import { lstat, mkdir, realpath } from 'node:fs/promises';
import { posix } from 'node:path';
import { RunnerError } from './protocol';

export const WORKSPACE = '/workspace';

function invalid(path: string, why: string): RunnerError {
  return new RunnerError('invalid_path', `Invalid path "${path}": ${why}`, { path });
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

/** The real path of an existing entry; refused when a symlink takes it out of the workspace. */
export async function resolveExisting(path: string, root = WORKSPACE): Promise<string> {
  const lexical = lexicalPath(path, root);
  let real: string;
  try {
    real = await realpath(lexical);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new RunnerError('file_not_found', `No such file: ${path}`, { path });
    }
    throw err;
  }
  if (!inside(await realpath(root), real))
    throw invalid(path, 'a symlink leads outside /workspace');
  return real;
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
  const parts = posix.relative(root, posix.dirname(target)).split('/').filter(Boolean);
  let current = realRoot;
  for (const part of parts) {
    const next = posix.join(current, part);
    const info = await lstat(next).catch(() => undefined);
    if (info === undefined) {
      await mkdir(next);
      created.push(next);
      current = next;
    } else if (info.isSymbolicLink()) {
      const real = await realpath(next).catch(() => {
        throw invalid(path, 'a symlink on the way is broken');
      });
      if (!inside(realRoot, real)) throw invalid(path, 'a symlink leads outside /workspace');
      current = real;
    } else if (info.isDirectory()) {
      current = next;
    } else {
      throw invalid(path, `"${part}" is not a directory`);
    }
  }
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
