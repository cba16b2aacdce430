import {
  ERROR_CLASSES,
  InvalidRequestError,
  SandboxError,
  statusOf,
  TerminalClosedError,
  WebSocketUnavailableError,
  type ApiErrorCode,
} from './errors.js';

/**
 * What the SDK uses of a WebSocket: the standard interface, as browsers, Node 22+, Bun and
 * Deno have it built in, and as the `ws` package gives it on Node 20.
 */
export interface WebSocketLike {
  binaryType: string;
  readonly readyState: number;
  send(data: string | Uint8Array): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: 'open' | 'message' | 'close' | 'error', listener: SocketListener): void;
}

/**
 * A listener of those events. Each implementation types its events its own way (the SDK
 * reads a message's `data` and a close's `code` and `reason`): only `any` fits them all.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type SocketListener = (event: any) => void;

/** A WebSocket class: the runtime's `WebSocket`, or the `ws` package's default export. */
export type WebSocketConstructor = new (url: string) => WebSocketLike;

/** How a terminal's shell ended, as the service reports it. */
export interface TerminalExit {
  /** The shell's exit code; 128 + the signal's number when a signal ended it (137: killed). */
  exitCode: number;
}

/** What a handle does besides speaking on its socket: kill its shell by pid. */
export interface TerminalDeps {
  terminalId: string;
  sessionId: string;
  kill: (pid: number) => Promise<unknown>;
}

/** Standard readyState values (the constants are not on every implementation's prototype). */
const OPEN = 1;
/** Output kept for a first `onData` listener at most (the oldest goes first past it). */
const MAX_EARLY_BYTES = 1 << 20;

/** The runtime's WebSocket class, or the one given; a clear error when there is none. */
export function webSocketClass(given: WebSocketConstructor | undefined): WebSocketConstructor {
  const found = given ?? (globalThis as { WebSocket?: WebSocketConstructor | undefined }).WebSocket;
  if (typeof found !== 'function') {
    throw new WebSocketUnavailableError({
      code: 'websocket_unavailable',
      status: 0,
      message:
        'This runtime has no WebSocket (Node 20 has none by default): pass one as the ' +
        "WebSocket option, e.g. `import WebSocket from 'ws'`",
    });
  }
  return found;
}

function closedError(message: string, cause?: unknown): TerminalClosedError {
  return new TerminalClosedError({ code: 'terminal_closed', status: 0, message, cause });
}

/** The error the service sent as `{"type":"error","error":{code,message}}`, as its class. */
function serviceError(error: { code?: unknown; message?: unknown }): SandboxError {
  const code = typeof error.code === 'string' ? error.code : 'internal_error';
  const ErrorClass: typeof SandboxError = Object.hasOwn(ERROR_CLASSES, code)
    ? ERROR_CLASSES[code as ApiErrorCode]
    : SandboxError;
  const message = typeof error.message === 'string' ? error.message : 'The terminal failed';
  return new ErrorClass({ code, status: statusOf(code), message });
}

/**
 * A terminal's open WebSocket: a shell on a pseudo-terminal in the session. Binary messages
 * carry its bytes both ways; `resize` sends the JSON control; the shell's end comes as an
 * `exit` message, then the socket closes. Made by `sandbox.terminals.open()`.
 *
 *     const term = await sandbox.terminals.open({ cols: 100, rows: 30 });
 *     term.onData((bytes) => process.stdout.write(bytes));
 *     term.sendInput('ls -la\r');
 *     term.sendInput('exit\r');
 *     const { exitCode } = await term.wait();
 */
export class TerminalHandle {
  readonly terminalId: string;
  readonly sessionId: string;
  /** The shell's pid in the sandbox, known once it started (`open` waits for that). */
  pid: number | undefined;
  private readonly listeners = new Set<(data: Uint8Array) => void>();
  /** Output that came before any `onData` listener (its last MAX_EARLY_BYTES): for the first. */
  private early: Uint8Array[] = [];
  private earlyBytes = 0;
  private closed = false;
  private readonly ended: Promise<TerminalExit>;
  private exit: TerminalExit | undefined;
  private failure: SandboxError | undefined;
  private readonly startWaiters: Array<{ resolve: () => void; reject: (e: unknown) => void }> = [];

  /** @internal Made by `sandbox.terminals.open()`. */
  constructor(
    private readonly socket: WebSocketLike,
    private readonly deps: TerminalDeps,
  ) {
    this.terminalId = deps.terminalId;
    this.sessionId = deps.sessionId;
    socket.binaryType = 'arraybuffer';
    this.ended = new Promise<TerminalExit>((resolve, reject) => {
      socket.addEventListener('message', (event: { data: unknown }) => this.receive(event.data));
      socket.addEventListener('error', () => undefined); // `close` follows and says the rest
      socket.addEventListener('close', (event: { code?: number; reason?: string }) => {
        this.closed = true;
        const error =
          this.failure ??
          closedError(
            `The terminal's connection closed before its shell ended (${event.code ?? 0} ` +
              `${event.reason ?? ''}): the connection dropped or was refused, or close() hung it up`,
          );
        for (const waiter of this.startWaiters.splice(0)) waiter.reject(error);
        if (this.exit !== undefined) resolve(this.exit);
        else reject(error);
      });
    });
    this.ended.catch(() => undefined); // rejected only for those who wait
  }

  /** Resolves once the shell runs (its pid known); rejects if the socket ends first. */
  started(): Promise<void> {
    if (this.pid !== undefined) return Promise.resolve();
    return new Promise((resolve, reject) => this.startWaiters.push({ resolve, reject }));
  }

  /**
   * Calls `listener` with each chunk of the terminal's output (bytes, as the program wrote
   * them: decode with a streaming `TextDecoder`). Output that came before the first listener
   * is given to it first (its last megabyte). Returns a function that removes the listener.
   */
  onData(listener: (data: Uint8Array) => void): () => void {
    this.listeners.add(listener);
    const early = this.early;
    this.early = [];
    this.earlyBytes = 0;
    for (const chunk of early) listener(chunk);
    return () => this.listeners.delete(listener);
  }

  /** Types `data` (text as UTF-8, or bytes): `\r` is Enter, `\x03` ^C, `\x04` ^D. */
  sendInput(data: string | Uint8Array): void {
    this.ensureOpen();
    this.socket.send(typeof data === 'string' ? new TextEncoder().encode(data) : data);
  }

  /** Resizes the terminal (its program gets SIGWINCH); 1…1000 columns and rows. */
  resize(cols: number, rows: number): void {
    const valid = (n: number) => Number.isInteger(n) && n >= 1 && n <= 1000;
    if (!valid(cols) || !valid(rows)) {
      throw new InvalidRequestError({
        code: 'invalid_request',
        status: 0,
        message: `A terminal's size is 1…1000 columns and rows, not ${cols}×${rows}`,
        details: { field: valid(cols) ? 'rows' : 'cols' },
      });
    }
    this.ensureOpen();
    this.socket.send(JSON.stringify({ type: 'resize', cols, rows }));
  }

  /**
   * Resolves with the shell's exit code once it ended. Rejects with the service's error (the
   * session deleted, its node lost) or a TerminalClosedError when the connection ended first.
   */
  wait(): Promise<TerminalExit> {
    return this.ended;
  }

  /**
   * Kills the shell and everything it started (SIGKILL, by its pid); `wait()` then resolves
   * with exit code 137. A shell that has ended, or was hung up by `close()`, is left alone.
   */
  async kill(): Promise<void> {
    await this.started();
    // Ended, or hung up by a closed connection (its pid may soon name another process).
    if (this.exit !== undefined || this.closed || this.pid === undefined) return;
    await this.deps.kill(this.pid);
  }

  /**
   * Closes the connection: the service hangs the shell up (SIGHUP, as closing a terminal
   * window; `nohup`ed jobs live on). `wait()` then rejects unless the shell had ended.
   */
  close(): void {
    this.socket.close(1000, 'closed by the client');
  }

  private ensureOpen(): void {
    if (this.socket.readyState !== OPEN || this.exit !== undefined) {
      throw closedError("The terminal's shell has ended, or its connection is closed");
    }
  }

  private receive(data: unknown): void {
    if (typeof data !== 'string') {
      const bytes = ArrayBuffer.isView(data)
        ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
        : new Uint8Array(data as ArrayBuffer);
      if (this.listeners.size === 0) this.keepEarly(bytes);
      for (const listener of this.listeners) listener(bytes);
      return;
    }
    const message = parseControl(data);
    if (message.type === 'started' && typeof message.pid === 'number') {
      this.pid = message.pid;
      for (const waiter of this.startWaiters.splice(0)) waiter.resolve();
    } else if (message.type === 'exit' && typeof message.exitCode === 'number') {
      this.exit = { exitCode: message.exitCode };
    } else if (message.type === 'error') {
      this.failure = serviceError(message.error ?? {});
    }
  }

  private keepEarly(bytes: Uint8Array): void {
    this.early.push(bytes);
    this.earlyBytes += bytes.byteLength;
    while (this.earlyBytes > MAX_EARLY_BYTES && this.early.length > 1) {
      this.earlyBytes -= this.early.shift()?.byteLength ?? 0;
    }
  }
}

interface ControlMessage {
  type?: unknown;
  pid?: unknown;
  exitCode?: unknown;
  error?: { code?: unknown; message?: unknown };
}

/** A text message of the service: `started`, `exit` or `error` (anything else is ignored). */
function parseControl(text: string): ControlMessage {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? value : {};
  } catch {
    return {};
  }
}

/**
 * Opens `url` (a terminal's `ws(s)://…?token=`) and resolves with its handle once the shell
 * runs; rejects when the socket cannot open or the shell cannot start.
 */
export async function openTerminalSocket(
  url: string,
  WebSocketClass: WebSocketConstructor,
  deps: TerminalDeps,
): Promise<TerminalHandle> {
  let socket: WebSocketLike;
  try {
    socket = new WebSocketClass(url);
  } catch (err) {
    throw closedError(`The terminal's WebSocket could not be made: ${String(err)}`, err);
  }
  const handle = new TerminalHandle(socket, deps);
  await handle.started();
  return handle;
}
