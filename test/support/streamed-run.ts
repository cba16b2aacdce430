import type { ApiClient } from './api-client';

/** One event of a streamed execute: its name and its JSON data. */
export interface RunEvent {
  id: string;
  event: string;
  data: Record<string, unknown>;
}

/** The events of a streamed execute's body, in order (complete ones only). */
export function parseEvents(text: string): RunEvent[] {
  return [...text.matchAll(/^id: (.*)\nevent: (\w+)\ndata: (.*)\n\n/gm)].map((m) => ({
    id: m[1] ?? '',
    event: m[2] ?? '',
    data: JSON.parse(m[3] ?? '{}') as Record<string, unknown>,
  }));
}

/** A streamed execute's body (Server-Sent Events), read as it comes. */
export class StreamedRun {
  text = '';
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder = new TextDecoder();

  constructor(response: Response) {
    this.reader = (response.body as ReadableStream<Uint8Array>).getReader();
  }

  /** Reads until the body holds `marker`; throws if the stream ends first. */
  async until(marker: string): Promise<void> {
    await this.untilTrue(() => this.text.includes(marker), JSON.stringify(marker));
  }

  /** Reads until `done(body)` holds (`what` names it); throws if the stream ends first. */
  async untilTrue(done: (text: string) => boolean, what: string): Promise<void> {
    while (!done(this.text)) {
      const chunk = await this.reader.read();
      if (chunk.done) throw new Error(`the stream ended before ${what}: ${this.text}`);
      this.text += this.decoder.decode(chunk.value, { stream: true });
    }
  }

  /**
   * Reads until the run's stdout so far holds `text` (not the raw body: an event's name, such
   * as `started`, would match a marker the run prints); throws if the stream ends first.
   */
  async untilStdout(text: string): Promise<void> {
    const stdout = (): string =>
      this.events()
        .filter((e) => e.event === 'stdout')
        .map((e) => String(e.data['data']))
        .join('');
    while (!stdout().includes(text)) {
      const { value, done } = await this.reader.read();
      if (done) throw new Error(`the stream ended before ${JSON.stringify(text)}: ${this.text}`);
      this.text += this.decoder.decode(value, { stream: true });
    }
  }

  /** Reads to the end (a cut connection counts as one) and returns the whole body. */
  async rest(): Promise<string> {
    for (;;) {
      const chunk = await this.reader.read().catch(() => ({ value: undefined, done: true }));
      if (chunk.done) return this.text;
      this.text += this.decoder.decode(chunk.value, { stream: true });
    }
  }

  /** The events so far, in order. */
  events(): RunEvent[] {
    return parseEvents(this.text);
  }
}

/** A new session of `api`'s account with one streamed run of `command` that reads stdin. */
export async function runReadingStdin(
  api: ApiClient,
  command: string,
): Promise<{ sessionId: string; run: StreamedRun }> {
  const sessionId = await api.createSession();
  const run = new StreamedRun(await api.executeStream(sessionId, { command, stdin: true }));
  return { sessionId, run };
}
