import { AppError } from '@sandbox/errors';
import type { OutputPosition } from '../agents/agent-messages';

export type OutputStream = 'stdout' | 'stderr';

/** Bytes at the end of `data` that begin a UTF-8 character not yet complete. */
export function incompleteTail(data: Buffer): number {
  for (let back = 1; back <= Math.min(3, data.length); back += 1) {
    const byte = data[data.length - back] ?? 0;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte: look further back
    const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}

/**
 * A run's two output streams turned into text, whole characters only: a character cut between
 * chunks waits for its rest. `at` counts, per stream, the bytes the text handed out so far
 * covers, so that a reader resuming there gets exactly the rest (no byte lost or repeated).
 */
export class OutputText {
  private held: Record<OutputStream, Buffer> = {
    stdout: Buffer.alloc(0),
    stderr: Buffer.alloc(0),
  };
  private readonly position: OutputPosition;

  constructor(from: OutputPosition = { stdout: 0, stderr: 0 }) {
    this.position = { ...from };
  }

  get at(): OutputPosition {
    return { ...this.position };
  }

  /** The text of `data` (after what was held) up to its last whole character. */
  push(stream: OutputStream, data: Buffer): string {
    const bytes = this.held[stream].length === 0 ? data : Buffer.concat([this.held[stream], data]);
    const whole = bytes.length - incompleteTail(bytes);
    this.held[stream] = Buffer.from(bytes.subarray(whole));
    this.position[stream] += whole;
    return bytes.subarray(0, whole).toString('utf8');
  }

  /** What is held of a stream, as text (an incomplete character becomes U+FFFD): its end. */
  flush(stream: OutputStream): string {
    const bytes = this.held[stream];
    this.held[stream] = Buffer.alloc(0);
    this.position[stream] += bytes.length;
    return bytes.toString('utf8');
  }

  /** Goes on from `at` (the output before it was dropped at the cap): nothing held is kept. */
  jump(at: OutputPosition): void {
    this.held.stdout = Buffer.alloc(0);
    this.held.stderr = Buffer.alloc(0);
    Object.assign(this.position, at);
  }
}

/**
 * What follows a stream's output: a context cell's values and error (`cell1`, `cell2`, …, in
 * order), its exit, then its end (the last event).
 */
export type EventMark = 'exit' | 'end' | `cell${number}`;

/** The id of an event of a run's output: `<processId>:<stdout>:<stderr>[:cellN|:exit|:end]`. */
export function outputEventId(processId: string, at: OutputPosition, mark?: EventMark): string {
  return `${processId}:${at.stdout}:${at.stderr}${mark === undefined ? '' : `:${mark}`}`;
}

const EVENT_ID = /^(proc_[a-f0-9]{16}):(\d{1,15}):(\d{1,15})(?::(exit|end|cell[1-9]\d{0,3}))?$/;

/** A `Last-Event-ID` of a run's output; 400 invalid_request for anything else. */
export function parseOutputEventId(id: string): {
  processId: string;
  at: OutputPosition;
  mark?: EventMark;
} {
  const match = EVENT_ID.exec(id.trim());
  if (match === null) {
    throw new AppError('invalid_request', 'Last-Event-ID is not an event id of a run', {
      details: { field: 'Last-Event-ID' },
    });
  }
  const [, processId = '', stdout = '0', stderr = '0', mark] = match;
  return {
    processId,
    at: { stdout: Number(stdout), stderr: Number(stderr) },
    ...(mark === undefined ? {} : { mark: mark as EventMark }),
  };
}
