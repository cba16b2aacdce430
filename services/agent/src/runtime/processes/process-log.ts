import { EventEmitter } from 'node:events';
import {
  closeSync,
  openSync,
  readFileSync,
  rmSync,
  unlinkSync,
  writeFileSync,
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

/** Each record: one byte naming the stream, four for the length, then the bytes. */
const HEADER_BYTES = 5;
const STREAM_BYTE: Record<OutputStream, number> = { stdout: 1, stderr: 2 };

/** Whether `at` is at or past `mark` in both streams. */
const covers = (at: OutputPosition, mark: OutputPosition): boolean =>
  at.stdout >= mark.stdout && at.stderr >= mark.stderr;

const positionAfter = (at: OutputPosition, stream: OutputStream, bytes: number) => ({
  ...at,
  [stream]: at[stream] + bytes,
});

/** A meta file's name: the process's id and the generation of the meta written in it. */
export const META_FILE = /^(proc_[a-f0-9]+)(?:\.(\d+))?\.json$/;
/** Any file of a process's log: a meta (of any generation, or none) or a segment. */
export const LOG_FILE = /^proc_[a-f0-9]+(?:\.\d+\.log|(?:\.\d+)?\.json)$/;

/**
 * One process's output on the node's disk, bounded: records in segments of half the cap, the
 * oldest dropped when a third begins, so that the newest output is always kept. Appends are
 * synchronous (a page-cache write), in the order the runner sent them; readers follow them.
 *
 * Its meta is written whole under a new name each time (`<id>.<generation>.json`), then the
 * previous one is removed: a reader takes the newest that parses. Replacing a file by a rename
 * made ext4 start the new file's writeback in the rename itself (its `auto_da_alloc`), about
 * 0.2 ms alone and several under load, four times a run on the agent's event loop. Neither
 * way syncs: the files outlive the agent's crash; a power loss may lose a process's meta.
 */
export class ProcessLog {
  private readonly events = new EventEmitter();
  private fd: number | undefined;
  private segmentBytes = 0;
  private end: OutputPosition;
  /** The files are gone or failed: nothing more is kept (see `safely`). */
  private broken = false;
  /** The generation of the meta file on disk (0: one named without it, by an older agent). */
  private generation: number;
  /** Whether a meta file of this log is on disk (of `generation`). */
  private metaOnDisk: boolean;
  /** A save waits for the end of this turn of the event loop (see `save`). */
  private saveQueued = false;
  /** Writes input to the running process, while it takes input. */
  input: ((data: Buffer, close: boolean, signal: AbortSignal) => Promise<number>) | undefined;

  constructor(
    private readonly dir: string,
    readonly meta: ProcessMeta,
    end: OutputPosition = { stdout: 0, stderr: 0 },
    /** Of the meta file it was read from; none for a new log. */
    generation?: number,
  ) {
    this.end = end;
    this.generation = generation ?? 0;
    this.metaOnDisk = generation !== undefined;
    this.events.setMaxListeners(0);
  }

  /**
   * A log found on disk (an agent restarted since it was written), from its meta of
   * `generation`: its end from its records.
   */
  static reopen(dir: string, meta: ProcessMeta, generation = 0): ProcessLog {
    const log = new ProcessLog(dir, meta, undefined, generation);
    const last = meta.segments.at(-1);
    if (last === undefined) return log;
    let data: Buffer;
    try {
      data = readFileSync(log.segmentPath(last.seq));
    } catch {
      return log;
    }
    let end = { ...last.start };
    for (let at = 0; at + HEADER_BYTES <= data.length;) {
      const length = data.readUInt32LE(at + 1);
      if (at + HEADER_BYTES + length > data.length) break;
      const stream = data.readUInt8(at) === STREAM_BYTE.stderr ? 'stderr' : 'stdout';
      end = positionAfter(end, stream, length);
      at += HEADER_BYTES + length;
    }
    return new ProcessLog(dir, meta, end, generation);
  }

  /** A new process's log, its first segment open and its meta on disk. */
  static create(dir: string, meta: Omit<ProcessMeta, 'segments'>): ProcessLog {
    const log = new ProcessLog(dir, { ...meta, segments: [] });
    log.safely(() => log.beginSegment(0));
    return log;
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
    if (this.fd === undefined || this.broken || data.length === 0) return this.position;
    this.safely(() => {
      if (this.segmentBytes >= this.meta.capBytes / 2) {
        this.beginSegment((this.meta.segments.at(-1)?.seq ?? -1) + 1);
      }
      const header = Buffer.alloc(HEADER_BYTES);
      header.writeUInt8(STREAM_BYTE[stream], 0);
      header.writeUInt32LE(data.length, 1);
      writeSync(this.fd as number, Buffer.concat([header, data]));
      this.segmentBytes += HEADER_BYTES + data.length;
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
    this.closeFile();
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
    let at = { ...from };
    let cursor: Cursor | undefined;
    for (;;) {
      if (signal?.aborted === true) return at;
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
        const stream: OutputStream =
          header.readUInt8(0) === STREAM_BYTE.stderr ? 'stderr' : 'stdout';
        const length = header.readUInt32LE(1);
        const data = Buffer.alloc(length);
        const body = await file.read(data, 0, length, cursor.offset + HEADER_BYTES);
        if (body.bytesRead < length) break; // still being written: read again later
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

  private beginSegment(seq: number): void {
    this.closeFile();
    this.fd = openSync(this.segmentPath(seq), 'a', 0o600);
    this.segmentBytes = 0;
    this.meta.segments.push({ seq, start: this.position });
    // Two segments at the most: the cap holds the newest half at least.
    while (this.meta.segments.length > 2) {
      const dropped = this.meta.segments.shift();
      if (dropped !== undefined) rmSync(this.segmentPath(dropped.seq), { force: true });
    }
    // At once: a meta on disk names only segments that exist.
    this.writeMeta();
  }

  segmentPath(seq: number): string {
    return join(this.dir, `${this.meta.id}.${seq}.log`);
  }

  metaPath(generation = this.generation): string {
    const suffix = generation === 0 ? '' : `.${generation}`;
    return join(this.dir, `${this.meta.id}${suffix}.json`);
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

  /** Writes the meta file whole under its next generation, then removes the one before. */
  private writeMeta(): void {
    this.safely(() => {
      const previous = this.metaPath();
      const next = this.generation + 1;
      writeFileSync(this.metaPath(next), JSON.stringify(this.meta), { mode: 0o600, flag: 'wx' });
      this.generation = next;
      if (this.metaOnDisk) unlinkSync(previous);
      this.metaOnDisk = true;
    });
  }

  /** Removes every file of the log; a run still writing to it goes on unlogged. */
  remove(): void {
    this.closeFile();
    this.broken = true;
    for (const segment of this.meta.segments)
      rmSync(this.segmentPath(segment.seq), { force: true });
    if (this.metaOnDisk) rmSync(this.metaPath(), { force: true });
    this.events.emit('change');
  }
}
