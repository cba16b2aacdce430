/** A file of a listing (spec 4.8), the same from the runner to the HTTP body. */
export interface FileEntry {
  /** Relative to /workspace. */
  path: string;
  size: number;
  /** ISO 8601 */
  modified: string;
  /** Listings hold files only (directories are walked, not listed). */
  type: 'file';
}

/** One page of a listing, sorted by path. */
export interface FileListing {
  files: FileEntry[];
  /** Files under the directory (only those seen when `truncated`). */
  total: number;
  /** The walk stopped at its cap. */
  truncated: boolean;
}

export function isFileEntryType(value: string): value is FileEntry['type'] {
  return value === 'file';
}

/** What a workspace entry is; a stat names a symlink itself, never what it points to. */
export type FileType = 'file' | 'directory' | 'symlink' | 'other';

export const FILE_TYPES: readonly FileType[] = ['file', 'directory', 'symlink', 'other'];

export function isFileType(value: string): value is FileType {
  return (FILE_TYPES as readonly string[]).includes(value);
}

/** One workspace entry (issue 42), the same from the runner to the HTTP body. */
export interface FileStat {
  /** Relative to /workspace, normalised; "" for the workspace itself. */
  path: string;
  type: FileType;
  /** Bytes (of a symlink: its target's name). */
  size: number;
  /** ISO 8601 */
  modified: string;
  /** Permission bits (`mode & 0o7777`), e.g. 420 for rw-r--r--. */
  mode: number;
}

/** A removal: the path removed, normalised. */
export interface RemovedFile {
  path: string;
}

/** A rename: both paths, normalised. */
export interface RenamedFile {
  from: string;
  to: string;
}

/** A directory made with its parents; `created` false when it was there already. */
export interface MadeDirectory {
  path: string;
  created: boolean;
}

/**
 * The file operations beyond write, read and list, as the runner takes them and the agent
 * passes them on (paths relative to /workspace).
 */
export type FileOperation =
  | { op: 'statFile'; path: string }
  | { op: 'removeFile'; path: string; recursive: boolean }
  | { op: 'renameFile'; from: string; to: string; overwrite: boolean }
  | { op: 'makeDirectory'; path: string };

/** What each file operation answers. */
export interface FileOperationResults {
  statFile: FileStat;
  removeFile: RemovedFile;
  renameFile: RenamedFile;
  makeDirectory: MadeDirectory;
}

export type FileOperationResult<O extends FileOperation> = FileOperationResults[O['op']];

/** What a watch reports of an entry (ADR 60). */
export const FILE_CHANGE_TYPES = ['create', 'write', 'remove', 'rename'] as const;
export type FileChangeType = (typeof FILE_CHANGE_TYPES)[number];

/** One change a watch saw, the same from the runner's front to the HTTP event (ADR 60). */
export interface FileChange {
  type: FileChangeType;
  /** Relative to /workspace; of a rename, where the entry went. */
  path: string;
  /** Of a rename: where the entry was. */
  oldPath?: string;
  isDirectory: boolean;
}

/**
 * What a watch passes on before its end, the same from the agent's runtime to the gateway's
 * route: its start, its changes, and `overflow` where changes were lost.
 */
export type WatchEvent =
  | { kind: 'watching'; directories: number }
  | { kind: 'changes'; changes: FileChange[] }
  | { kind: 'overflow' };

/**
 * Why a watch ended: its client left (`cancelled`), its directory went (`removed`), or the
 * sandbox's runner stopped (`stopped`: a deep sleep, a delete, a restart of the runner).
 */
export type WatchEndReason = 'cancelled' | 'removed' | 'stopped';
