import { randomBytes } from 'node:crypto';
import type { OutputPosition, RunResult } from '@sandbox/contract';

/* What is kept of a process besides its output, and where a reader is in that output. */

export type { OutputPosition } from '@sandbox/contract';

export type OutputStream = 'stdout' | 'stderr';

/**
 * How a process is known: `running`; `exited` (its result kept); `lost` (the node's agent
 * restarted, or its sandbox's runner died, while it ran: its output up to then is kept).
 */
export type ProcessState = 'running' | 'exited' | 'lost';

/** What is kept of one process (a run) besides its output. */
export interface ProcessMeta {
  id: string;
  pid: number;
  kind: 'command' | 'code';
  /** The command, or the code's first line, cut at LABEL_CHARS. */
  label: string;
  startedAt: string;
  state: ProcessState;
  exitedAt?: string;
  /** Where the output stood when the process exited: what follows is its background's. */
  exitAt?: OutputPosition;
  result?: RunResult;
  /** A run that failed after it started (its runner died): the error it ended with. */
  failure?: { code: string; message: string };
  /** Whether it was started with stdin, and how many bytes of input it took. */
  stdin: boolean;
  stdinBytes: number;
  /** Its output pipes are closed: no more output will come (background holders gone too). */
  outputClosed: boolean;
  /** The output kept at most: past it, the oldest half goes. */
  capBytes: number;
  /** The segments kept, oldest first, with the position each starts at. */
  segments: { seq: number; start: OutputPosition }[];
}

/** A chunk read back, and the position after it. */
export interface LoggedChunk {
  stream: OutputStream;
  data: Buffer;
  at: OutputPosition;
}

/** What a read hands its consumer: chunks, and where the kept output skipped past a reader. */
export type LogItem = LoggedChunk | { gap: OutputPosition };

export const LABEL_CHARS = 200;

/**
 * A meta's JSON (a record's, or an older agent's file) as the meta of process `id`, if it
 * is one: every segment a non-negative integer (segment numbers make file names).
 */
export function metaOf(json: string, id: string): ProcessMeta | undefined {
  const meta = JSON.parse(json) as ProcessMeta;
  const segments: unknown = meta.segments;
  const wellFormed =
    meta.id === id &&
    Array.isArray(segments) &&
    segments.every(
      (segment: { seq?: unknown } | null) =>
        Number.isSafeInteger(segment?.seq) && (segment?.seq as number) >= 0,
    );
  return wellFormed ? meta : undefined;
}

/** Whether `at` is at or past `mark` in both streams. */
export const covers = (at: OutputPosition, mark: OutputPosition): boolean =>
  at.stdout >= mark.stdout && at.stderr >= mark.stderr;

export const positionAfter = (at: OutputPosition, stream: OutputStream, bytes: number) => ({
  ...at,
  [stream]: at[stream] + bytes,
});

/** Random bytes for process ids, drawn 4 KiB at a time rather than 8 bytes per run. */
const ids = { pool: Buffer.alloc(0), at: 0 };

/** A new process's id: `proc_` and 16 random hex digits. */
export function newProcessId(): string {
  if (ids.at + 8 > ids.pool.length) Object.assign(ids, { pool: randomBytes(4096), at: 0 });
  ids.at += 8;
  return `proc_${ids.pool.toString('hex', ids.at - 8, ids.at)}`;
}
