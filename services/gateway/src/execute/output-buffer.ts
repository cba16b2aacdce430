import { StringDecoder } from 'node:string_decoder';

/** Collects one output stream as UTF-8 text, up to a cap; the rest is dropped and flagged. */
export class OutputBuffer {
  private readonly decoder = new StringDecoder('utf8');
  private readonly parts: string[] = [];
  private bytes = 0;
  truncated = false;

  constructor(private readonly maxBytes: number) {}

  push(chunk: Buffer): void {
    const room = this.maxBytes - this.bytes;
    if (room <= 0) {
      this.truncated = true;
      return;
    }
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    if (kept !== chunk) this.truncated = true;
    this.bytes += kept.length;
    this.parts.push(this.decoder.write(kept));
  }

  text(): string {
    return this.parts.join('') + this.decoder.end();
  }
}
