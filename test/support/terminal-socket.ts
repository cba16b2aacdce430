import WebSocket from 'ws';

/** What a terminal's WebSocket showed and sent, as a test reads it. */
export class SocketTerminal {
  screen = '';
  readonly controls: Array<Record<string, unknown>> = [];
  readonly closed: Promise<{ code: number; reason: string }>;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) this.screen += data.toString('utf8');
      else this.controls.push(JSON.parse(data.toString('utf8')) as Record<string, unknown>);
    });
    this.closed = new Promise((resolve) =>
      ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    );
  }

  /**
   * Opens `url` (ws://…); resolves with the terminal, or with the HTTP status and error body
   * of a refused upgrade.
   */
  static open(
    url: string,
    headers: Record<string, string> = {},
  ): Promise<SocketTerminal | { status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers });
      const terminal = new SocketTerminal(ws);
      ws.once('open', () => resolve(terminal));
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      ws.once('error', (err) => reject(err));
    });
  }

  type(text: string): void {
    this.ws.send(Buffer.from(text), { binary: true });
  }

  resize(cols: number, rows: number): void {
    this.ws.send(JSON.stringify({ type: 'resize', cols, rows }));
  }

  /** Waits until the screen (from `from` on) matches `pattern`. */
  async until(pattern: RegExp, from = 0, ms = 15_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!pattern.test(this.screen.slice(from))) {
      if (Date.now() > deadline) {
        throw new Error(`terminal never showed ${pattern}; it shows:\n${this.screen.slice(from)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

/** Whether `opened` is a refusal (the upgrade answered with an HTTP error). */
export function refused(
  opened: SocketTerminal | { status: number; body: string },
): opened is { status: number; body: string } {
  return !(opened instanceof SocketTerminal);
}
