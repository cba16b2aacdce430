import type { HttpClient } from './http.js';
import {
  openTerminalSocket,
  webSocketClass,
  type TerminalHandle,
  type WebSocketConstructor,
} from './terminal-handle.js';
import type { CreateTerminalBody, KillResult, TerminalMade } from './types.js';

/** A terminal made in a session: open `url` once with a WebSocket (see the API's terminals). */
export interface Terminal extends TerminalMade {
  /** `ws(s)://…?token=…`: opens it once, within `tokenExpiresAt`, from anywhere (a browser). */
  url: string;
}

export interface TerminalOpenOptions {
  /**
   * The WebSocket class to open it with; default: the client's `WebSocket` option, else the
   * runtime's (browsers, Node 22+, Bun, Deno). On Node 20: `import WebSocket from 'ws'`.
   */
  WebSocket?: WebSocketConstructor;
  /** Aborts the terminal's creation (not the open socket: `close()` it). */
  signal?: AbortSignal;
  /** A first `onData` listener (as `handle.onData(cb)`; output before it is not lost either). */
  onData?: (data: Uint8Array) => void;
}

/**
 * A session's terminals: shells on a pseudo-terminal, over a WebSocket. `open` gives a
 * handle; `create` only the URL, for a client of your own (xterm.js in a browser).
 */
export class Terminals {
  /** @internal Made by `Sandbox`; use `sandbox.terminals`. */
  constructor(
    private readonly http: HttpClient,
    private readonly sessionId: string,
    private readonly kill: (pid: number) => Promise<KillResult>,
  ) {}

  /**
   * Makes a terminal to open once with a WebSocket at `url` (within 60 s): binary messages
   * carry its bytes both ways, `{"type":"resize","cols","rows"}` resizes.
   */
  async create(
    body: CreateTerminalBody = {},
    options: { signal?: AbortSignal } = {},
  ): Promise<Terminal> {
    const made = await this.http.json<TerminalMade>({
      method: 'POST',
      path: `/sessions/${encodeURIComponent(this.sessionId)}/terminals`,
      json: body,
      signal: options.signal,
      retry: 'refused',
    });
    const url = new URL(`${this.http.options.apiUrl}${made.path}`);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    url.searchParams.set('token', made.token);
    return { ...made, url: url.toString() };
  }

  /**
   * Makes a terminal and opens it: resolves with its handle once the shell runs
   * (`onData`, `sendInput`, `resize`, `wait`, `kill`, `close`). Throws
   * WebSocketUnavailableError, before making anything, when the runtime has no WebSocket and
   * none was given.
   */
  async open(
    body: CreateTerminalBody = {},
    options: TerminalOpenOptions = {},
  ): Promise<TerminalHandle> {
    const WebSocketClass = webSocketClass(options.WebSocket ?? this.http.options.WebSocket);
    const terminal = await this.create(body, options);
    const handle = await openTerminalSocket(terminal.url, WebSocketClass, {
      terminalId: terminal.terminalId,
      sessionId: this.sessionId,
      kill: this.kill,
    });
    if (options.onData !== undefined) handle.onData(options.onData);
    return handle;
  }
}
