import { EventEmitter } from 'node:events';
import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readFileSync,
  rmSync,
  truncateSync,
} from 'node:fs';
import { join } from 'node:path';
import type { RunResult } from '@sandbox/contract';
import { reuseFile } from './log-files';
import {
  appendWhole,
  META_BYTE,
  positionAfterRecords,
  recordOf,
  STREAM_BYTE,
  wholeBytesOf,
} from './log-records';
import {
  covers,
  positionAfter,
  type LogItem,
  type OutputPosition,
  type OutputStream,
  type ProcessMeta,
} from './process-meta';
import { readSegment, type Cursor } from './segment-reader';

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
  /** Reads under way: a log being read never hands its file to another (see `detach`). */
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
    log.end = positionAfterRecords(data, last.start);
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
      const read = await readSegment(this.segmentPath(cursor.seq), cursor, at, take, {
        signal,
        untilExit,
        meta: this.meta,
        removed: () => this.removed,
      });
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
   * Removes the log but for its newest segment file, whose path it returns, bytes and all, for
   * the caller to empty and hand to a new log (SpareFiles.giveFull); a log someone is reading
   * is removed whole instead (undefined).
   */
  detach(): string | undefined {
    const kept = this.recyclable();
    this.removeKeeping(kept);
    return kept;
  }

  /** The newest file, if the log can hand it on: no reader, no write open, nothing broken. */
  private recyclable(): string | undefined {
    const newest = this.meta.segments.at(-1);
    if (this.readers > 0 || this.broken || this.fd !== undefined || newest === undefined) {
      return undefined;
    }
    return this.segmentPath(newest.seq);
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
