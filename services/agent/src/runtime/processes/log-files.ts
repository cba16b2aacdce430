import { closeSync, constants, ftruncateSync, openSync, renameSync, rmSync } from 'node:fs';

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

/** Whether the file at `path` (never a link) is now empty. */
export function emptied(path: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_NOFOLLOW);
    ftruncateSync(fd, 0);
    return true;
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Opens `spare` (an empty file, see SpareFiles) as the new segment `path`; a file that cannot
 * be taken is removed and `path` made anew. Emptied again once opened, whatever it holds.
 */
export function reuseFile(spare: string, path: string): number {
  let fd: number | undefined;
  try {
    renameSync(spare, path);
    fd = openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW);
    ftruncateSync(fd, 0);
    return fd;
  } catch {
    if (fd !== undefined) closeSync(fd);
    rmSync(spare, { force: true });
    rmSync(path, { force: true });
    return openSync(path, 'a', 0o600);
  }
}
