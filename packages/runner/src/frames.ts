/*
 * A context's process writes its cells' output and its answers on the same pipes: an answer
 * is one line that begins with a mark (a byte 0x1e and a random token only the runner and the
 * process know); everything else is output. Pure: unit-tested beside.
 */

const RECORD_SEPARATOR = '\x1e';

/** The mark that begins an answer line, for a token. */
export function frameMark(token: string): string {
  return `${RECORD_SEPARATOR}${token}`;
}

/** Splits a pipe's bytes into output and answer lines (without the mark and the newline). */
export class FrameSplitter {
  private readonly mark: Buffer;
  private pending = Buffer.alloc(0);

  constructor(token: string) {
    this.mark = Buffer.from(frameMark(token));
  }

  /** Output to pass on, in order, and the answers, in order, that `chunk` completes. */
  push(chunk: Buffer): { output: Buffer[]; frames: string[] } {
    let buffer = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const output: Buffer[] = [];
    const frames: string[] = [];
    for (;;) {
      const at = buffer.indexOf(this.mark);
      if (at === -1) {
        const keep = this.partialMarkAtEnd(buffer);
        if (buffer.length - keep > 0) output.push(buffer.subarray(0, buffer.length - keep));
        this.pending = Buffer.from(buffer.subarray(buffer.length - keep));
        break;
      }
      if (at > 0) output.push(buffer.subarray(0, at));
      const end = buffer.indexOf(10, at + this.mark.length);
      if (end === -1) {
        this.pending = Buffer.from(buffer.subarray(at));
        break;
      }
      frames.push(buffer.subarray(at + this.mark.length, end).toString('utf8'));
      buffer = buffer.subarray(end + 1);
    }
    return { output, frames };
  }

  /** How many bytes at the end of `buffer` may begin a mark that the next chunk completes. */
  private partialMarkAtEnd(buffer: Buffer): number {
    const longest = Math.min(buffer.length, this.mark.length - 1);
    for (let size = longest; size > 0; size--) {
      if (buffer.subarray(buffer.length - size).equals(this.mark.subarray(0, size))) return size;
    }
    return 0;
  }
}
