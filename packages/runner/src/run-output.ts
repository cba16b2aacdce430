import type { Readable } from 'node:stream';

/**
 * What `promise` resolves to, or undefined after `ms`, whichever comes first; the timer goes
 * with the promise, so that a run that ended at once leaves no wake-up of the runner behind.
 */
export function settledWithin<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** Where output goes; `false` from a write means "slow down" until `onDrain` calls back. */
export interface RunSink {
  stdout(chunk: Buffer): boolean;
  stderr(chunk: Buffer): boolean;
  onDrain(resume: () => void): void;
}

/**
 * A run's stdout and stderr piped to a sink. Output flows unless the sink is full or the
 * agent asked for a pause; once the run is finished, late output (of background processes
 * holding the pipes) is read and, unless `late` is 'forward', dropped — so that those
 * processes never block on the agent's pauses. What was read before the end is the run's, and
 * is never dropped.
 */
export class RunOutput {
  /** Resolves when both pipes have closed. */
  readonly ended: Promise<void>;
  private finished = false;
  private sinkFull = false;
  private pausedByAgent = false;

  constructor(
    private readonly streams: readonly [stdout: Readable, stderr: Readable],
    private readonly sink: RunSink,
    private readonly late: 'drop' | 'forward' = 'drop',
  ) {
    const [stdout, stderr] = streams;
    this.forward(stdout, (chunk) => sink.stdout(chunk));
    this.forward(stderr, (chunk) => sink.stderr(chunk));
    // Registered now: the pipes may close before the process's exit is reported.
    this.ended = Promise.all(
      streams.map((stream) => new Promise<void>((ok) => stream.once('end', ok))),
    ).then(() => undefined);
  }

  /** Stops reading the output (the run's process blocks on a full pipe) / starts again. */
  pause(): void {
    this.pausedByAgent = true;
    this.applyFlow();
  }

  resume(): void {
    this.pausedByAgent = false;
    this.applyFlow();
  }

  /**
   * The run is over: what was read of its output already (held while the sink was full or
   * the agent paused it) still goes out, however full the sink; what comes later is late
   * output of background processes, dropped or forwarded at the sink's pace (never held by
   * the agent's pauses).
   */
  finish(): void {
    // read() hands each chunk to the 'data' listener of `forward`, which sends it on.
    for (const stream of this.streams) while (stream.read() !== null);
    this.finished = true;
    this.applyFlow();
  }

  private applyFlow(): void {
    const held = this.finished
      ? this.late === 'forward' && this.sinkFull
      : this.sinkFull || this.pausedByAgent;
    for (const stream of this.streams) {
      if (held) stream.pause();
      else stream.resume();
    }
  }

  private forward(stream: Readable, write: (chunk: Buffer) => boolean): void {
    stream.on('data', (chunk: Buffer) => {
      if (this.finished && this.late === 'drop') return;
      if (!write(chunk) && !this.sinkFull) {
        this.sinkFull = true;
        this.applyFlow();
        this.sink.onDrain(() => {
          this.sinkFull = false;
          this.applyFlow();
        });
      }
    });
  }
}
