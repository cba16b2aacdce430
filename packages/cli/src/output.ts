import { SandboxError } from '@sandbox/sdk';

type Sink = NodeJS.WritableStream;

/**
 * How a command prints its answer: for people, or with `--json` as JSON (never guessed from
 * whether stdout is a terminal, so that `sandbox ls | grep` greps what people read).
 */
export interface Output {
  readonly json: boolean;
  /** `value` as JSON with --json, else the lines of `human()` (nothing when it gives none). */
  print(value: unknown, human: () => string | string[]): void;
  /** A note for people, on stderr (never with --json's answer on stdout). */
  note(text: string): void;
}

export function outputOf(io: { stdout: Sink; stderr: Sink }, json: boolean | undefined): Output {
  return {
    json: json === true,
    print(value, human) {
      if (json === true) {
        io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
        return;
      }
      const text = human();
      const lines = typeof text === 'string' ? [text] : text;
      if (lines.length > 0) io.stdout.write(`${lines.join('\n')}\n`);
    },
    note(text) {
      io.stderr.write(`${text}\n`);
    },
  };
}

/**
 * Writes `data` and waits while `sink` is full, so that a slow reader of ours (a pipe) slows
 * the stream we read down to its pace instead of piling its output up here.
 */
export function writeTo(sink: Sink, data: string | Uint8Array): Promise<void> {
  if (sink.write(data)) return Promise.resolve();
  return new Promise((resolve) => sink.once('drain', resolve));
}

/** An error as JSON: the API's code, message and request id when it has them. */
export function errorJson(err: unknown): { code?: string; message: string; requestId?: string } {
  if (!(err instanceof SandboxError)) return { message: (err as Error)?.message ?? String(err) };
  return {
    code: err.code,
    message: err.message,
    ...(err.requestId === undefined ? {} : { requestId: err.requestId }),
  };
}

/** An error as one line for stderr: the API's code and request id when it has them. */
export function errorLine(err: unknown): string {
  if (err instanceof SandboxError) {
    const request = err.requestId === undefined ? '' : `, request ${err.requestId}`;
    return `sandbox: ${err.message} (${err.code}${request})`;
  }
  return `sandbox: ${err instanceof Error ? err.message : String(err)}`;
}
