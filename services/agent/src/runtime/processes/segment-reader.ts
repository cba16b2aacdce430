import { open, type FileHandle } from 'node:fs/promises';
import { HEADER_BYTES, META_BYTE, streamOf } from './log-records';
import {
  covers,
  positionAfter,
  type LogItem,
  type OutputPosition,
  type ProcessMeta,
} from './process-meta';

/** What a read of a process's log needs of it (see ProcessLog). */
export interface ReadableLog {
  readonly meta: ProcessMeta;
  /** Its files were removed: nothing more is read. */
  readonly isRemoved: boolean;
  /** Exited (or lost) and its output closed. */
  readonly settled: boolean;
  isAtEnd(at: OutputPosition): boolean;
  segmentPath(seq: number): string;
  /** Resolves at the next append, exit or close (or abort). */
  changed(signal: AbortSignal | undefined): Promise<void>;
}

/** The segment holding `at`: the newest that starts at or before it (-1: dropped). */
function segmentFor(meta: ProcessMeta, at: OutputPosition): number {
  for (let i = meta.segments.length - 1; i >= 0; i -= 1) {
    const start = meta.segments[i]?.start;
    if (start !== undefined && start.stdout <= at.stdout && start.stderr <= at.stderr) return i;
  }
  return -1;
}

/** ProcessLog's `read`, from `from`, across its segments (see there). */
export async function readLog(
  log: ReadableLog,
  from: OutputPosition,
  take: (item: LogItem) => Promise<void> | void,
  { follow, signal, untilExit }: { follow: boolean; signal?: AbortSignal; untilExit: boolean },
): Promise<OutputPosition> {
  const { meta } = log;
  let at = { ...from };
  let cursor: Cursor | undefined;
  for (;;) {
    // A log removed under its reader has nothing more to read.
    if (signal?.aborted === true || log.isRemoved) return at;
    if (cursor === undefined) {
      const index = segmentFor(meta, at);
      const segment = meta.segments[Math.max(index, 0)];
      if (segment === undefined) return at;
      if (index < 0) {
        // What the reader was at has been dropped: it goes on from the oldest kept byte.
        at = { ...segment.start };
        await take({ gap: { ...at } });
      }
      cursor = { seq: segment.seq, offset: 0, scan: { ...segment.start } };
    }
    const read = await readSegment(log.segmentPath(cursor.seq), cursor, at, take, {
      signal,
      untilExit,
      meta,
      removed: () => log.isRemoved,
    });
    const index = meta.segments.findIndex((s) => s.seq === cursor?.seq);
    if (read === undefined || index < 0) {
      cursor = undefined; // dropped under the reader
      continue;
    }
    at = read.at;
    if (read.pastExit) return at;
    const next = meta.segments[index + 1];
    if (next !== undefined) {
      cursor = { seq: next.seq, offset: 0, scan: { ...next.start } };
      continue;
    }
    if (!follow) return at;
    if (untilExit && meta.exitAt !== undefined && covers(at, meta.exitAt)) return at;
    if (!log.isAtEnd(at)) continue; // appended while it read
    if (log.settled) return at;
    await log.changed(signal);
  }
}

/** Where a read is in the files: a segment, a byte in it, and the position there. */
export interface Cursor {
  seq: number;
  offset: number;
  scan: OutputPosition;
}

/**
 * Reads the cursor's segment (the file at `path`) from its offset to the current end, handing on
 * what lies at or past `from`; moves the cursor; the reader's new position, or undefined when the
 * segment is gone. `meta` is its log's (its exit read as it is now), `removed` whether the log's
 * files were removed.
 */
export async function readSegment(
  path: string,
  cursor: Cursor,
  from: OutputPosition,
  take: (item: LogItem) => Promise<void> | void,
  {
    signal,
    untilExit,
    meta,
    removed,
  }: {
    signal: AbortSignal | undefined;
    untilExit: boolean;
    meta: ProcessMeta;
    removed: () => boolean;
  },
): Promise<{ at: OutputPosition; pastExit: boolean } | undefined> {
  let file: FileHandle;
  try {
    file = await open(path, 'r');
  } catch {
    return undefined;
  }
  let at = { ...from };
  let pastExit = false;
  try {
    const header = Buffer.alloc(HEADER_BYTES);
    while (signal?.aborted !== true) {
      const { bytesRead } = await file.read(header, 0, HEADER_BYTES, cursor.offset);
      if (bytesRead < HEADER_BYTES) break;
      const kind = header.readUInt8(0);
      const stream = streamOf(kind);
      const length = header.readUInt32LE(1);
      const data = Buffer.alloc(length);
      const body = await file.read(data, 0, length, cursor.offset + HEADER_BYTES);
      if (body.bytesRead < length) break; // still being written: read again later
      // Removed while it read: what the file holds now may be another log's.
      if (removed()) break;
      if (kind === META_BYTE) {
        cursor.offset += HEADER_BYTES + length;
        continue;
      }
      const recordStart = cursor.scan[stream];
      const { exitAt } = meta;
      if (untilExit && exitAt !== undefined && recordStart >= exitAt[stream]) {
        pastExit = true; // written by what the process left behind, after it exited
        break;
      }
      cursor.offset += HEADER_BYTES + length;
      cursor.scan = positionAfter(cursor.scan, stream, length);
      const skip = at[stream] - recordStart;
      if (skip >= length) continue;
      at = { ...at, [stream]: recordStart + length };
      await take({ stream, data: data.subarray(Math.max(skip, 0)), at: { ...at } });
    }
  } finally {
    await file.close();
  }
  return { at, pastExit };
}
