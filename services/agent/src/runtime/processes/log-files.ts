import {
  closeSync,
  constants,
  fstatSync,
  ftruncateSync,
  openSync,
  renameSync,
  rmSync,
} from 'node:fs';

/* The files of a process's log: their names, and the taking of a spare one (see SpareFiles). */

/** A segment's name: the process's id and the segment's number. */
export const SEGMENT_FILE = /^(proc_[a-f0-9]+)\.(\d+)\.log$/;
/**
 * A meta file's name, as older agents wrote them (the meta is now a record in the segments):
 * the process's id and the generation of the meta written in it.
 */
export const META_FILE = /^(proc_[a-f0-9]+)(?:\.(\d+))?\.json$/;
/** Any file of a process's log: a segment, or an older agent's meta (of any generation). */
export const LOG_FILE = /^proc_[a-f0-9]+(?:\.\d+\.log|(?:\.\d+)?\.json)$/;

/**
 * Opens `spare` (an empty file, see SpareFiles) as the new segment `path`; a file that cannot
 * be taken is removed and `path` made anew. Emptied again once opened if it holds anything.
 */
export function reuseFile(spare: string, path: string): number {
  const { O_WRONLY, O_APPEND, O_NOFOLLOW } = constants;
  let fd: number | undefined;
  try {
    renameSync(spare, path);
    fd = openSync(path, O_WRONLY | O_APPEND | O_NOFOLLOW);
    // Not truncated when already empty: on ext4 a truncate to nothing makes the file's next
    // close wait for its data to be written out (auto_da_alloc), on the run's path.
    if (fstatSync(fd).size !== 0) ftruncateSync(fd, 0);
    return fd;
  } catch {
    if (fd !== undefined) closeSync(fd);
    rmSync(spare, { force: true });
    rmSync(path, { force: true });
    return openSync(path, 'a', 0o600);
  }
}
