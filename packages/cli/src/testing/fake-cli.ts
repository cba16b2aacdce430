import { Readable } from 'node:stream';
import type { ExecutionEvent, ExecutionResult, Sandbox } from '@sandbox/sdk';
import type { Api, CliIo } from '../context';
import { runCli } from '../run-cli';

/*
 * The CLI in a test: runCli with collected output, Ctrl-C on demand and a fake API whose
 * sessions are fakes of the SDK's Sandbox (only what a test sets; the rest throws).
 */

/** A writable that keeps what is written. */
function collector(): NodeJS.WritableStream & { text: string; isTTY: boolean } {
  const sink = {
    text: '',
    isTTY: false,
    write(chunk: string | Uint8Array) {
      sink.text += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      return true;
    },
    // A terminal's screen is listened to for resizes; a collector never resizes.
    on: () => sink,
    off: () => sink,
  };
  return sink as unknown as NodeJS.WritableStream & { text: string; isTTY: boolean };
}

export interface FakeCli {
  run(...argv: string[]): Promise<number>;
  stdout(): string;
  stderr(): string;
  /** Ctrl-C, as main.ts delivers it. */
  interrupt(): void;
  /** The client options each API was made with. */
  clients: { apiUrl?: string; apiKey?: string }[];
}

export function fakeCli(
  api: Partial<Api> = {},
  options: { stdin?: string; env?: Record<string, string> } = {},
): FakeCli {
  const stdout = collector();
  const stderr = collector();
  const listeners = new Set<() => void>();
  const io: CliIo = {
    env: options.env ?? {},
    stdin: Readable.from([options.stdin ?? '']),
    stdout,
    stderr,
    onInterrupt: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  const clients: FakeCli['clients'] = [];
  const unused = (name: string) => () => Promise.reject(new Error(`api.${name} not faked`));
  return {
    run: (...argv) =>
      runCli(argv, io, {
        api: (client) => {
          clients.push(client);
          return {
            create: unused('create'),
            connect: unused('connect'),
            list: unused('list'),
            snapshots: () => ({
              list: unused('snapshots.list'),
              delete: unused('snapshots.delete'),
            }),
            ...api,
          };
        },
      }),
    stdout: () => stdout.text,
    stderr: () => stderr.text,
    interrupt: () => listeners.forEach((listener) => listener()),
    clients,
  };
}

/** A fake session: `id` and what the test gives; anything else it is asked for throws. */
export function fakeSandbox(parts: Record<string, unknown> = {}): Sandbox {
  return {
    id: 'ses_aaaaaaaaaaaaaaaaaaaaaaaa',
    previewToken: undefined,
    previewUrl: (port = 3000) => `https://${port === 3000 ? '' : `${port}-`}aaaa.preview.test`,
    previewHeaders: () => ({}),
    ...parts,
  } as unknown as Sandbox;
}

export function result(overrides: Partial<ExecutionResult> = {}): ExecutionResult {
  return {
    stdout: '',
    stderr: '',
    exitCode: 0,
    executionTime: 5,
    memoryUsed: 1,
    cpuTime: 1,
    timedOut: false,
    ...overrides,
  };
}

/** A stream() that yields `events` (and records its input and options). */
export function streamOf(events: ExecutionEvent[]) {
  return jest.fn(async function* (_input: unknown, _options: unknown) {
    await Promise.resolve();
    yield* events;
  });
}
