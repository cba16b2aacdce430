import { StringDecoder } from 'node:string_decoder';

/**
 * Splits Docker's multiplexed attach stream (no TTY): frames of an 8-byte header — stream type
 * (1 stdout, 2 stderr), three zero bytes, a big-endian 32-bit length — and a payload.
 */
export class DockerFrameParser {
  private pending: Buffer = Buffer.alloc(0);

  constructor(
    private readonly onStdout: (payload: Buffer) => void,
    private readonly onStderr: (payload: Buffer) => void,
  ) {}

  push(chunk: Buffer): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    while (this.pending.length >= 8) {
      const size = this.pending.readUInt32BE(4);
      if (this.pending.length < 8 + size) break;
      const type = this.pending[0];
      const payload = this.pending.subarray(8, 8 + size);
      this.pending = this.pending.subarray(8 + size);
      if (type === 2) this.onStderr(payload);
      else this.onStdout(payload);
    }
  }
}

/** One frame of that stream, as dockerd writes it (the parser's inverse; tests speak it). */
export function dockerFrame(type: 1 | 2, text: string): Buffer {
  const payload = Buffer.from(text);
  const header = Buffer.alloc(8);
  header[0] = type;
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
}

/** Longest line a LineSplitter keeps; the runner's lines (base64 chunks) stay far below. */
export const MAX_LINE_CHARS = 16 * 1024 * 1024;

/**
 * Cuts a byte stream into lines (without the newline). A line longer than `maxLineChars` is
 * dropped and reported to `onOverflow`, so that a peer that never sends a newline cannot make
 * the reader hold unbounded memory.
 */
export class LineSplitter {
  /** The current line so far, in pieces (joined once, when its newline comes). */
  private pieces: string[] = [];
  private partialLength = 0;
  private readonly decoder = new StringDecoder('utf8');

  constructor(
    private readonly onLine: (line: string) => void,
    private readonly onOverflow: () => void = () => undefined,
    private readonly maxLineChars = MAX_LINE_CHARS,
  ) {}

  push(chunk: Buffer): void {
    const text = this.decoder.write(chunk);
    let start = 0;
    for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
      this.pieces.push(text.slice(start, end));
      const line = this.pieces.join('');
      this.pieces = [];
      this.partialLength = 0;
      if (line !== '') this.onLine(line);
      start = end + 1;
    }
    if (start < text.length) {
      this.pieces.push(text.slice(start));
      this.partialLength += text.length - start;
    }
    if (this.partialLength > this.maxLineChars) {
      this.pieces = [];
      this.partialLength = 0;
      this.onOverflow();
    }
  }
}
