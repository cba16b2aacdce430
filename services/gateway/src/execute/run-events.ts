import type { OutputMark, ProcessRef } from '../agents/agent-messages';
import { OutputText, outputEventId, type EventMark, type OutputStream } from './output-text';
import { cellEvents, cellMark } from './cell-events';
import type { ExecutionResult } from './execution-result';

/** Sends one event with its id; false when the reader's buffer is full (it then drains). */
export type SendEvent = (event: string, data: unknown, id: string) => boolean;

/**
 * The events of a streamed run, in order, each with its id (`<processId>:<stdout
 * bytes>:<stderr bytes>`, where the output stands after it; a counter before the process
 * exists): `started` once, as soon as the run's process is known (the node's start message,
 * the mark of its first output, or at the latest its result), then its output as text (whole
 * characters only), a context cell's values and error (`cell_result`, `cell_error`), `exit` and
 * `result`. Every run whose process started says `started` first,
 * so that a client learns the pid and `proc_` id of any run, not only of one taking stdin.
 */
export class RunEvents {
  private readonly text = new OutputText();
  private process: ProcessRef | undefined;
  /** Events before the run's process exists (an install that failed) are counted instead. */
  private counter = 0;

  constructor(private readonly send: SendEvent) {}

  /** The run's process, once known. */
  get current(): ProcessRef | undefined {
    return this.process;
  }

  /** The run's process is known: `started` the first time, nothing after. */
  started(process: ProcessRef): void {
    if (this.process !== undefined) return;
    this.process = process;
    this.send('started', { type: 'started', pid: process.pid, processId: process.id }, this.id());
  }

  /** A chunk of output (`started` first if its mark names the process); false: a full buffer. */
  output(stream: OutputStream, data: Buffer, mark?: OutputMark): boolean {
    if (mark !== undefined) this.started(mark.process);
    const chunk = this.text.push(stream, data);
    return chunk === '' || this.send(stream, { type: stream, data: chunk }, this.id());
  }

  /** The rest of the output held back, a cell's values and error, then `exit` and `result`. */
  finish(result: ExecutionResult): void {
    for (const stream of ['stdout', 'stderr'] as const) {
      const rest = this.text.flush(stream);
      if (rest !== '') this.send(stream, { type: stream, data: rest }, this.id());
    }
    cellEvents(result).forEach(({ event, data }, at) => {
      this.send(event, data, this.id(cellMark(at + 1)));
    });
    this.send('exit', { type: 'exit', code: result.exitCode }, this.id('exit'));
    this.send('result', result, this.id('end'));
  }

  /** The id of an `error` event: the stream's last. */
  lastId(): string {
    return this.id('end');
  }

  private id(mark?: EventMark): string {
    this.counter += 1;
    return this.process === undefined
      ? String(this.counter)
      : outputEventId(this.process.id, this.text.at, mark);
  }
}
