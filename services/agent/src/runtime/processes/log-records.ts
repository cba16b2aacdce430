import { ftruncateSync, writeSync } from 'node:fs';
import { positionAfter, type OutputPosition, type OutputStream } from './process-meta';

/* How a process's log is laid out in its segment files: a sequence of records. */

/** Each record: one byte naming its kind, four for the length, then the bytes. */
export const HEADER_BYTES = 5;
export const STREAM_BYTE: Record<OutputStream, number> = { stdout: 1, stderr: 2 };
/** A record holding the log's meta (JSON) as it was then: the newest whole one counts. */
export const META_BYTE = 3;

/** The stream an output record's kind byte names. */
export const streamOf = (kind: number): OutputStream =>
  kind === STREAM_BYTE.stderr ? 'stderr' : 'stdout';

/** One record: its kind and its bytes. */
export interface LogRecord {
  kind: number;
  body: Buffer;
}

/** Where the whole records of a segment's bytes end (what follows is a record cut short). */
export function wholeBytesOf(data: Buffer): number {
  let at = 0;
  while (at + HEADER_BYTES <= data.length) {
    const next = at + HEADER_BYTES + data.readUInt32LE(at + 1);
    if (next > data.length) break;
    at = next;
  }
  return at;
}

/**
 * Appends one record whole to the segment open as `fd`, of `sizeBefore` bytes: a short
 * write (a full disk) is cut off again and throws, so no record is ever left cut short in
 * the middle of a segment, where what follows it would be read out of step.
 */
export function appendWhole(fd: number, record: Buffer, sizeBefore: number): void {
  if (writeSync(fd, record) === record.length) return;
  ftruncateSync(fd, sizeBefore);
  throw new Error('a log record was cut short');
}

/** The whole records of a segment's bytes, in order (a record cut short ends them). */
export function* recordsOf(data: Buffer): Generator<LogRecord> {
  for (let at = 0; at + HEADER_BYTES <= data.length;) {
    const length = data.readUInt32LE(at + 1);
    const next = at + HEADER_BYTES + length;
    if (next > data.length) return;
    yield { kind: data.readUInt8(at), body: data.subarray(at + HEADER_BYTES, next) };
    at = next;
  }
}

export const recordOf = (kind: number, body: Buffer): Buffer => {
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt8(kind, 0);
  header.writeUInt32LE(body.length, 1);
  return Buffer.concat([header, body]);
};

/** A meta record: the meta's JSON. */
export const metaRecordOf = (meta: object): Buffer =>
  recordOf(META_BYTE, Buffer.from(JSON.stringify(meta)));

/** The position after the output records of a segment's bytes, from `start`, where it begins. */
export function positionAfterRecords(data: Buffer, start: OutputPosition): OutputPosition {
  let end = { ...start };
  for (const record of recordsOf(data)) {
    if (record.kind === META_BYTE) continue;
    end = positionAfter(end, streamOf(record.kind), record.body.length);
  }
  return end;
}
