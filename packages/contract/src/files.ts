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
