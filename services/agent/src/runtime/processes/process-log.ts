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
import {
  appendWhole,
  metaRecordOf,
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
import { readLog } from './segment-reader';

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
 * `echo`. Nothing syncs: the files outlive the agent's crash; a power loss may lose a
 * process's newest meta.
 *
 * A new log's file is made later, off its run's path (see `flush`): until then its records
 * wait in memory, and a short run's whole log (its output and its final meta) is one write.
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
  private endedAt: number | undefined; // endedAtMs, once read (reset when the end changes)
  /** A save waits for the end of this turn of the event loop (see `save`). */
  private saveQueued = false;
  /**
   * A new log's records, its file not made yet (see `flush`), and what makes that file (opens
   * it as the path given, a spare renamed there or a new one); undefined once made.
   */
  private unwritten: { records: Buffer[]; open: (path: string) => number } | undefined;
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
   * A new process's log, its file not made yet: `open` makes it (opens the path it is given,
   * its first segment's) when the log is flushed (see `flush`).
   */
  static create(
    dir: string,
    meta: Omit<ProcessMeta, 'segments'>,
    open: (path: string) => number,
  ): ProcessLog {
    const log = new ProcessLog(dir, {
      ...meta,
      segments: [{ seq: 0, start: { stdout: 0, stderr: 0 } }],
    });
    log.unwritten = { records: [], open };
    return log;
  }

  /**
   * Makes a new log's file and writes what it holds so far, its meta as it is now last, in
   * one write (closed at once if its output is): a crash before it leaves no file, one during
   * it a file with no whole meta, which a restart removes. Appends go to the file from then on.
   * Called off the run's path (ProcessLogs' deferred steps), or by anything that needs the
   * file first (a read, a second segment).
   */
  flush(): void {
    const { unwritten } = this;
    if (unwritten === undefined) return;
    this.unwritten = undefined;
    this.segmentBytes = 0;
    let made = false;
    this.safely(() => {
      this.fd = unwritten.open(this.segmentPath(0));
      made = true;
      this.appendRecord(Buffer.concat([...unwritten.records, metaRecordOf(this.meta)]));
      if (this.meta.outputClosed) this.closeFile();
    });
    // No file could be made: nothing is kept, nothing read.
    if (!made) this.meta.segments = [];
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
    if (this.unwritten !== undefined && this.segmentBytes >= this.meta.capBytes / 2) this.flush();
    const closed =
      (this.fd === undefined && this.unwritten === undefined) || this.meta.outputClosed;
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
    this.endedAt = undefined;
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
      this.endedAt = undefined;
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

  /** When it ended (or started, if it never said), in epoch ms: what pruning compares. */
  get endedAtMs(): number {
    this.endedAt ??= Date.parse(this.meta.exitedAt ?? this.meta.startedAt);
    return this.endedAt;
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
    this.flush(); // what it holds is read from its file
    this.readers += 1;
    try {
      return await readLog(this, from, take, { follow, signal, untilExit });
    } finally {
      this.readers -= 1;
    }
  }

  /** Whether its files were removed (or handed to another log). */
  get isRemoved(): boolean {
    return this.removed;
  }

  isAtEnd(at: OutputPosition): boolean {
    return covers(at, this.end);
  }

  /** Resolves at the next append, exit or close (or abort). */
  changed(signal: AbortSignal | undefined): Promise<void> {
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
    // At once: the new segment holds the meta that names it.
    this.writeMeta();
  }

  /** To its file, or with what waits for the file to be made (see `flush`). */
  private appendRecord(record: Buffer): void {
    if (this.unwritten === undefined) appendWhole(this.fd as number, record, this.segmentBytes);
    else this.unwritten.records.push(record);
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
    // A log not flushed yet writes its meta as it is then.
    if (this.saveQueued || this.broken || this.unwritten !== undefined) return;
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
    if (last === undefined || this.unwritten !== undefined) return;
    this.safely(() => {
      const record = metaRecordOf(this.meta);
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
    const unusable = this.readers > 0 || this.broken || this.fd !== undefined;
    if (unusable || this.unwritten !== undefined || newest === undefined) {
      return undefined;
    }
    return this.segmentPath(newest.seq);
  }

  private removeKeeping(kept: string | undefined): void {
    this.closeFile();
    this.broken = true;
    this.removed = true;
    const made = this.unwritten === undefined;
    this.unwritten = undefined; // never made: nothing to remove
    for (const segment of made ? this.meta.segments : []) {
      const path = this.segmentPath(segment.seq);
      if (path !== kept) rmSync(path, { force: true });
    }
    if (this.legacyMeta !== undefined) rmSync(this.legacyMeta, { force: true });
    this.events.emit('change');
  }
}
