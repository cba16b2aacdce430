import { open, type FileHandle } from 'node:fs/promises';
import { HEADER_BYTES, META_BYTE, streamOf } from './log-records';
import { positionAfter, type LogItem, type OutputPosition, type ProcessMeta } from './process-meta';

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
