import { posix } from 'node:path';
import { AppError } from '@sandbox/errors';

export const WORKSPACE = '/workspace';

function invalidPath(path: string, why: string): AppError {
  return new AppError('invalid_path', `Invalid path "${path}": ${why}`, { details: { path } });
}

/**
 * A path relative to /workspace, normalised; absolute paths, NUL bytes and `..` that leaves
 * the workspace are refused (the runner checks symlinks inside the sandbox).
 */
export function workspaceRelativePath(path: string, { allowRoot = false } = {}): string {
  if (path.includes('\0')) throw invalidPath(path, 'contains a NUL byte');
  if (posix.isAbsolute(path)) throw invalidPath(path, 'must be relative to /workspace');
  if (!allowRoot && path.endsWith('/')) throw invalidPath(path, 'names a directory');
  const resolved = posix.resolve(WORKSPACE, path);
  if (resolved !== WORKSPACE && !resolved.startsWith(WORKSPACE + '/')) {
    throw invalidPath(path, 'leaves /workspace');
  }
  const relative = posix.relative(WORKSPACE, resolved);
  if (relative === '' && !allowRoot) throw invalidPath(path, 'names no file');
  return relative;
}

/**
 * A path naming an entry of any kind (a trailing `/` allowed), relative and normalised; the
 * workspace itself ("", ".") only with `allowRoot`.
 */
export function entryRelativePath(path: string, { allowRoot = false } = {}): string {
  const relative = workspaceRelativePath(path, { allowRoot: true });
  if (relative === '' && !allowRoot) throw invalidPath(path, 'is the workspace itself');
  return relative;
}

/** `workingDir` as an absolute path inside /workspace (relative, or absolute under it). */
export function resolveWorkingDir(value: string | undefined): string {
  if (value === undefined || value === '') return WORKSPACE;
  if (value.includes('\0')) throw invalidPath(value, 'contains a NUL byte');
  const resolved = posix.resolve(WORKSPACE, value);
  if (resolved !== WORKSPACE && !resolved.startsWith(WORKSPACE + '/')) {
    throw invalidPath(value, 'workingDir must be inside /workspace');
  }
  return resolved;
}
