import { EventEmitter } from 'node:events';
import {
  closeSync,
  constants,
  fstatSync,
  ftruncateSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  truncateSync,
  writeSync,
} from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunResult } from '@sandbox/contract';

/** Where a reader is in a process's output: bytes of each stream before it. */
export interface OutputPosition {
  stdout: number;
  stderr: number;
}

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

/** Where a read is in the files: a segment, a byte in it, and the position there. */
interface Cursor {
  seq: number;
  offset: number;
  scan: OutputPosition;
}

/** Each record: one byte naming its kind, four for the length, then the bytes. */
const HEADER_BYTES = 5;
const STREAM_BYTE: Record<OutputStream, number> = { stdout: 1, stderr: 2 };
/** A record holding the log's meta (JSON) as it was then: the newest whole one counts. */
const META_BYTE = 3;

/** One record: its kind and its bytes. */
interface LogRecord {
  kind: number;
  body: Buffer;
}

/** Where the whole records of a segment's bytes end (what follows is a record cut short). */
function wholeBytesOf(data: Buffer): number {
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
function appendWhole(fd: number, record: Buffer, sizeBefore: number): void {
  if (writeSync(fd, record) === record.length) return;
  ftruncateSync(fd, sizeBefore);
  throw new Error('a log record was cut short');
}

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

/** The whole records of a segment's bytes, in order (a record cut short ends them). */
function* recordsOf(data: Buffer): Generator<LogRecord> {
  for (let at = 0; at + HEADER_BYTES <= data.length;) {
    const length = data.readUInt32LE(at + 1);
    const next = at + HEADER_BYTES + length;
    if (next > data.length) return;
    yield { kind: data.readUInt8(at), body: data.subarray(at + HEADER_BYTES, next) };
    at = next;
  }
}

const recordOf = (kind: number, body: Buffer): Buffer => {
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt8(kind, 0);
  header.writeUInt32LE(body.length, 1);
  return Buffer.concat([header, body]);
};

/** Whether `at` is at or past `mark` in both streams. */
const covers = (at: OutputPosition, mark: OutputPosition): boolean =>
  at.stdout >= mark.stdout && at.stderr >= mark.stderr;

const positionAfter = (at: OutputPosition, stream: OutputStream, bytes: number) => ({
  ...at,
  [stream]: at[stream] + bytes,
});

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
 * One process's output on the node's disk, bounded: records in segments of half the cap, the
 * oldest dropped when a third begins, so that the newest output is always kept. Appends are
 * synchronous (a page-cache write), in the order the runner sent them; readers follow them.
 *
 * Its meta is a record of the segment too, appended whole each time it changes: the newest
 * whole one counts (an agent that died while appending one leaves the one before). One file
 * per process, made once: a file made and removed per meta write cost three inodes per run,
 * and on ext4 without a journal each new inode is found by scanning past every inode freed in
 * the last minutes (`recently_deleted`): 9% of the machine's CPU with 60 sessions running
 * `echo`. (Before that, a meta replaced by a rename made ext4 start its writeback in the
 * rename, several ms under load.) Nothing syncs: the files outlive the agent's crash; a
 * power loss may lose a process's newest meta.
 */
export class ProcessLog {
  private readonly events = new EventEmitter();
  private fd: number | undefined;
  private segmentBytes = 0;
  private end: OutputPosition;
  /** The files are gone or failed: nothing more is kept (see `safely`). */
  private broken = false;
  /** Its files were removed (or handed to another log): nothing more is read from them. */
  private removed = false;
  /** Reads under way: a log being read never hands its file to another (see `recycle`). */
  private readers = 0;
  /** An older agent's meta file this log was read from: removed once a meta record is written. */
  private legacyMeta: string | undefined;
  /** A save waits for the end of this turn of the event loop (see `save`). */
  private saveQueued = false;
  /** Writes input to the running process, while it takes input. */
  input: ((data: Buffer, close: boolean, signal: AbortSignal) => Promise<number>) | undefined;

  constructor(
    private readonly dir: string,
    readonly meta: ProcessMeta,
    end: OutputPosition = { stdout: 0, stderr: 0 },
  ) {
    this.end = end;
    this.events.setMaxListeners(0);
  }

  /**
   * A log found on disk (an agent restarted since it was written), from the newest whole meta
   * record of its segments `seqs` (any order); undefined if none has one. Segment files its
   * meta does not name (made by an agent that died before it wrote that meta) are removed.
   */
  static load(dir: string, id: string, seqs: number[]): ProcessLog | undefined {
    const newestFirst = [...seqs].sort((a, b) => b - a);
    for (const seq of newestFirst) {
      let meta: ProcessMeta | undefined;
      let data: Buffer;
      try {
        data = readFileSync(join(dir, `${id}.${seq}.log`));
        for (const record of recordsOf(data)) {
          if (record.kind === META_BYTE) meta = metaOf(record.body.toString('utf8'), id) ?? meta;
        }
      } catch {
        continue; // unreadable: an older segment may hold a meta
      }
      if (meta === undefined) continue;
      const named = new Set(meta.segments.map((segment) => segment.seq));
      for (const other of seqs) {
        if (!named.has(other)) rmSync(join(dir, `${id}.${other}.log`), { force: true });
      }
      // Its end is in the segment just read, unless a newer one went with the others.
      const read = meta.segments.at(-1)?.seq === seq ? data : undefined;
      return ProcessLog.reopen(dir, meta, { lastSegment: read });
    }
    return undefined;
  }

  /**
   * A log found on disk from `meta` (read from a segment, or from `legacyMeta`, an older
   * agent's meta file): its end from the records of its last segment (`lastSegment` when
   * already read).
   */
  static reopen(
    dir: string,
    meta: ProcessMeta,
    { legacyMeta, lastSegment }: { legacyMeta?: string; lastSegment?: Buffer | undefined } = {},
  ): ProcessLog {
    const log = new ProcessLog(dir, meta);
    log.legacyMeta = legacyMeta;
    const last = meta.segments.at(-1);
    if (last === undefined) return log;
    let data: Buffer;
    try {
      data = lastSegment ?? readFileSync(log.segmentPath(last.seq));
    } catch {
      return log;
    }
    // An agent that died while appending left a record cut short: it goes, before anything
    // is appended after it.
    const whole = wholeBytesOf(data);
    if (whole < data.length) log.safely(() => truncateSync(log.segmentPath(last.seq), whole));
    let end = { ...last.start };
    for (const record of recordsOf(data)) {
      if (record.kind === META_BYTE) continue;
      const stream = record.kind === STREAM_BYTE.stderr ? 'stderr' : 'stdout';
      end = positionAfter(end, stream, record.body.length);
    }
    log.end = end;
    return log;
  }

  /**
   * A new process's log, its first segment open and its meta on disk: the file `spare`
   * (empty, see SpareFiles) renamed to its name, when given.
   */
  static create(dir: string, meta: Omit<ProcessMeta, 'segments'>, spare?: string): ProcessLog {
    const log = new ProcessLog(dir, { ...meta, segments: [] });
    log.safely(() => log.beginSegment(0, spare));
    return log;
  }

  /** Whether its meta is still an older agent's file (no meta record written yet). */
  get fromLegacyMeta(): boolean {
    return this.legacyMeta !== undefined;
  }

  get position(): OutputPosition {
    return { ...this.end };
  }

  /** Where the oldest kept byte of each stream is. */
  get keptFrom(): OutputPosition {
    return { ...(this.meta.segments[0]?.start ?? this.end) };
  }

  /** Appends one chunk; the position after it. */
  append(stream: OutputStream, data: Buffer): OutputPosition {
    const closed = this.fd === undefined || this.meta.outputClosed;
    if (closed || this.broken || data.length === 0) return this.position;
    this.safely(() => {
      if (this.segmentBytes >= this.meta.capBytes / 2) {
        this.beginSegment((this.meta.segments.at(-1)?.seq ?? -1) + 1);
      }
      this.appendRecord(recordOf(STREAM_BYTE[stream], data));
      this.end = positionAfter(this.end, stream, data.length);
    });
    this.events.emit('change');
    return this.position;
  }

  /**
   * Runs a step on the log's files; a failure (its session removed under the run, a full
   * node disk) ends the keeping of this log, never the run or the agent.
   */
  private safely(step: () => void): void {
    if (this.broken) return;
    try {
      step();
    } catch {
      this.broken = true;
    }
  }

  /** The process exited (or failed after it started): what it ended with is kept. */
  exited(outcome: { result: RunResult } | { failure: { code: string; message: string } }): void {
    this.input = undefined;
    this.meta.exitedAt = new Date().toISOString();
    this.meta.exitAt = this.position;
    if ('result' in outcome) {
      const { limitsExceeded: _internal, ...result } = outcome.result;
      this.meta.state = 'exited';
      this.meta.result = result;
    } else {
      this.meta.state = 'lost';
      this.meta.failure = outcome.failure;
    }
    this.save();
    this.events.emit('change');
  }

  /** No more output will come. */
  closeOutput(): void {
    if (this.meta.outputClosed) return;
    this.meta.outputClosed = true;
    if (this.meta.state === 'running') {
      this.meta.state = 'lost';
      this.meta.exitedAt = new Date().toISOString();
    }
    this.input = undefined;
    // The file closes once the meta saying so is written in it (see writeMeta).
    this.save();
    this.events.emit('change');
  }

  private closeFile(): void {
    const { fd } = this;
    this.fd = undefined;
    if (fd !== undefined) this.safely(() => closeSync(fd));
  }

  tookInput(bytes: number): void {
    this.meta.stdinBytes += bytes;
  }

  /** Whether nothing more will happen: exited (or lost) and its output closed. */
  get settled(): boolean {
    return this.meta.state !== 'running' && this.meta.outputClosed;
  }

  /**
   * Hands the output from `from` to `take`, in the order it was written, at `take`'s pace
   * (it returns once it can take more); with `follow`, waits for more until the output is
   * closed and the process ended — or, `untilExit`, until the output it wrote itself before it
   * exited (not what its background wrote later). A position older than what is kept gets a
   * `gap` first. An aborted `signal` ends the read. Returns the position reached.
   */
  async read(
    from: OutputPosition,
    take: (item: LogItem) => Promise<void> | void,
    {
      follow,
      signal,
      untilExit = false,
    }: { follow: boolean; signal?: AbortSignal; untilExit?: boolean },
  ): Promise<OutputPosition> {
    this.readers += 1;
    try {
      return await this.readFrom(from, take, { follow, signal, untilExit });
    } finally {
      this.readers -= 1;
    }
  }

  private async readFrom(
    from: OutputPosition,
    take: (item: LogItem) => Promise<void> | void,
    { follow, signal, untilExit }: { follow: boolean; signal?: AbortSignal; untilExit: boolean },
  ): Promise<OutputPosition> {
    let at = { ...from };
    let cursor: Cursor | undefined;
    for (;;) {
      // A log removed under its reader has nothing more to read.
      if (signal?.aborted === true || this.removed) return at;
      if (cursor === undefined) {
        const index = this.segmentFor(at);
        const segment = this.meta.segments[Math.max(index, 0)];
        if (segment === undefined) return at;
        if (index < 0) {
          // What the reader was at has been dropped: it goes on from the oldest kept byte.
          at = { ...segment.start };
          await take({ gap: { ...at } });
        }
        cursor = { seq: segment.seq, offset: 0, scan: { ...segment.start } };
      }
      const read = await this.readSegment(cursor, at, take, { signal, untilExit });
      const index = this.meta.segments.findIndex((s) => s.seq === cursor?.seq);
      if (read === undefined || index < 0) {
        cursor = undefined; // dropped under the reader
        continue;
      }
      at = read.at;
      if (read.pastExit) return at;
      const next = this.meta.segments[index + 1];
      if (next !== undefined) {
        cursor = { seq: next.seq, offset: 0, scan: { ...next.start } };
        continue;
      }
      if (!follow) return at;
      if (untilExit && this.meta.exitAt !== undefined && covers(at, this.meta.exitAt)) return at;
      if (!this.isAtEnd(at)) continue; // appended while it read
      if (this.settled) return at;
      await this.changed(signal);
    }
  }

  private isAtEnd(at: OutputPosition): boolean {
    return covers(at, this.end);
  }

  /** The segment holding `at`: the newest that starts at or before it (-1: dropped). */
  private segmentFor(at: OutputPosition): number {
    for (let i = this.meta.segments.length - 1; i >= 0; i -= 1) {
      const start = this.meta.segments[i]?.start;
      if (start !== undefined && start.stdout <= at.stdout && start.stderr <= at.stderr) return i;
    }
    return -1;
  }

  /**
   * Reads the cursor's segment from its offset to the current end, handing on what lies at or
   * past `from`; moves the cursor; the reader's new position, or undefined when the segment
   * is gone.
   */
  private async readSegment(
    cursor: Cursor,
    from: OutputPosition,
    take: (item: LogItem) => Promise<void> | void,
    { signal, untilExit }: { signal: AbortSignal | undefined; untilExit: boolean },
  ): Promise<{ at: OutputPosition; pastExit: boolean } | undefined> {
    let file: FileHandle;
    try {
      file = await open(this.segmentPath(cursor.seq), 'r');
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
        const stream: OutputStream = kind === STREAM_BYTE.stderr ? 'stderr' : 'stdout';
        const length = header.readUInt32LE(1);
        const data = Buffer.alloc(length);
        const body = await file.read(data, 0, length, cursor.offset + HEADER_BYTES);
        if (body.bytesRead < length) break; // still being written: read again later
        // Removed while it read: what the file holds now may be another log's.
        if (this.removed) break;
        if (kind === META_BYTE) {
          cursor.offset += HEADER_BYTES + length;
          continue;
        }
        const recordStart = cursor.scan[stream];
        const { exitAt } = this.meta;
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

  /** Resolves at the next append, exit or close (or abort). */
  private changed(signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        this.events.off('change', done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      this.events.on('change', done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  private beginSegment(seq: number, spare?: string): void {
    this.closeFile();
    const path = this.segmentPath(seq);
    this.fd = spare === undefined ? openSync(path, 'a', 0o600) : reuseFile(spare, path);
    this.segmentBytes = 0;
    this.meta.segments.push({ seq, start: this.position });
    // Two segments at the most: the cap holds the newest half at least.
    while (this.meta.segments.length > 2) {
      const dropped = this.meta.segments.shift();
      if (dropped !== undefined) rmSync(this.segmentPath(dropped.seq), { force: true });
    }
    // At once: the new segment holds the meta that names it.
    this.writeMeta();
  }

  private appendRecord(record: Buffer): void {
    appendWhole(this.fd as number, record, this.segmentBytes);
    this.segmentBytes += record.length;
  }

  segmentPath(seq: number): string {
    return join(this.dir, `${this.meta.id}.${seq}.log`);
  }

  /**
   * Writes the meta at the end of this turn of the event loop: the changes a turn makes (a
   * run's exit and the close of its output, often in one message of the runner) cost one
   * write. An agent that dies in between leaves the meta before them.
   */
  save(): void {
    if (this.saveQueued || this.broken) return;
    this.saveQueued = true;
    setImmediate(() => {
      this.saveQueued = false;
      this.writeMeta();
    });
  }

  /**
   * Appends the meta, whole, to the newest segment (opened again for a log read from disk);
   * closes the segment once the meta says the output is closed.
   */
  private writeMeta(): void {
    const last = this.meta.segments.at(-1);
    if (last === undefined) return;
    this.safely(() => {
      const record = recordOf(META_BYTE, Buffer.from(JSON.stringify(this.meta)));
      if (this.fd === undefined) {
        // A log read from disk: its segment exists (no new file), and is never a link.
        const { O_WRONLY, O_APPEND, O_NOFOLLOW } = constants;
        const fd = openSync(this.segmentPath(last.seq), O_WRONLY | O_APPEND | O_NOFOLLOW);
        try {
          appendWhole(fd, record, fstatSync(fd).size);
        } finally {
          closeSync(fd);
        }
      } else {
        this.appendRecord(record);
        if (this.meta.outputClosed) this.closeFile();
      }
      if (this.legacyMeta !== undefined) rmSync(this.legacyMeta, { force: true });
      this.legacyMeta = undefined;
    });
  }

  /** Removes every file of the log; a run still writing to it goes on unlogged. */
  remove(): void {
    this.removeKeeping(undefined);
  }

  /**
   * Removes the log but for its newest segment file, which it empties and returns the path of
   * for a new log to take (see SpareFiles); a log someone is reading, or whose file cannot be
   * emptied, is removed whole instead (undefined).
   */
  recycle(): string | undefined {
    const newest = this.meta.segments.at(-1);
    let kept: string | undefined;
    if (this.readers === 0 && !this.broken && this.fd === undefined && newest !== undefined) {
      kept = this.segmentPath(newest.seq);
      if (!emptied(kept)) kept = undefined;
    }
    this.removeKeeping(kept);
    return kept;
  }

  private removeKeeping(kept: string | undefined): void {
    this.closeFile();
    this.broken = true;
    this.removed = true;
    for (const segment of this.meta.segments) {
      const path = this.segmentPath(segment.seq);
      if (path !== kept) rmSync(path, { force: true });
    }
    if (this.legacyMeta !== undefined) rmSync(this.legacyMeta, { force: true });
    this.events.emit('change');
  }
}

/** Whether the file at `path` (never a link) is now empty. */
function emptied(path: string): boolean {
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
function reuseFile(spare: string, path: string): number {
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
