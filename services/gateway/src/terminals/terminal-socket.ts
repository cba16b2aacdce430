import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { bearerToken } from '@sandbox/contract';
import { AppError, toAppError, toErrorBody } from '@sandbox/errors';
import type { Logger } from '@sandbox/logger';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { AccountStore } from '../accounts/account-store';
import type { AgentClient } from '../agents/agent-client';
import { looksLikeApiKey } from '../auth/api-keys';
import type { SessionAccess } from '../sessions/session-access';
import { requestIdOf } from '../http/request-context';
import { hashTerminalToken, type TerminalRecord, type TerminalStore } from './terminal-store';

export interface TerminalSocketDeps {
  store: TerminalStore;
  accounts: AccountStore;
  access: Pick<SessionAccess, 'open' | 'keepActiveWhile'>;
  logger: Logger;
}

/** The WebSocket of a terminal: `/v1/sessions/{sessionId}/terminals/{terminalId}/connect`. */
const CONNECT_PATH = /^\/v1\/sessions\/([^/]+)\/terminals\/([^/]+)\/connect$/;
/** Largest message a client may send (typed or pasted bytes, or a resize). */
const MAX_MESSAGE_BYTES = 1 << 20;
/** Screen bytes waiting for a slow client past this: the program's output is held. */
const HIGH_WATER_BYTES = 1 << 20;

/**
 * Serves terminals' WebSockets on the gateway's server: the caller shows the terminal's
 * single-use token (`?token=`, for browsers) or the account's API key (`Authorization`);
 * the session is woken and kept active while the socket is open; binary messages are typed
 * bytes, text messages JSON controls (`{"type":"resize","cols","rows"}`); the server sends
 * the screen's bytes as binary messages and `{"type":"started","pid"}`, `{"type":"exit",
 * "exitCode"}` and `{"type":"error","error"}` as text. Returns a function that closes them all.
 */
export function attachTerminalSockets(server: Server, deps: TerminalSocketDeps): () => void {
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  const requestIds = new WeakMap<IncomingMessage, string>();
  wss.on('headers', (headers, req) => headers.push(`X-Request-Id: ${requestIds.get(req) ?? ''}`));
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => undefined);
    const header = req.headers['x-request-id'];
    const requestId = requestIdOf(typeof header === 'string' ? header : undefined);
    requestIds.set(req, requestId);
    const url = new URL(req.url ?? '/', 'http://gateway');
    const match = CONNECT_PATH.exec(url.pathname);
    if (match === null) {
      refuse(socket, requestId, new AppError('not_found', 'No such route'));
      return;
    }
    const [, sessionId = '', terminalId = ''] = match;
    claim(deps, req, url, sessionId, terminalId)
      .then(async (record) => {
        const { agent } = await deps.access.open({ accountId: record.accountId }, sessionId);
        wss.handleUpgrade(req, socket, head, (ws) => {
          bridge(ws, agent, record, deps.access.keepActiveWhile(sessionId), deps.logger);
        });
      })
      .catch((err: unknown) => refuse(socket, requestId, err, deps.logger));
  });
  return () => {
    for (const ws of wss.clients) ws.terminate();
    wss.close();
  };
}

/** The terminal the caller may open (once), or a 401/404 AppError. */
async function claim(
  deps: TerminalSocketDeps,
  req: IncomingMessage,
  url: URL,
  sessionId: string,
  terminalId: string,
): Promise<TerminalRecord> {
  const token = url.searchParams.get('token');
  let record: TerminalRecord | undefined;
  if (token !== null) {
    record = await deps.store.open(terminalId, sessionId, { tokenHash: hashTerminalToken(token) });
    if (record === undefined) {
      throw new AppError('unauthorized', 'Unknown, used or expired terminal token');
    }
  } else {
    const key = bearerToken(req.headers.authorization);
    const principal =
      key !== undefined && looksLikeApiKey(key)
        ? await deps.accounts.findPrincipal(key)
        : undefined;
    if (principal === undefined) {
      throw new AppError('unauthorized', 'Send the terminal token (?token=) or the API key');
    }
    if (!principal.scopes.includes('execute')) {
      throw new AppError('forbidden', 'This API key lacks the "execute" scope', {
        details: { scope: 'execute' },
      });
    }
    record = await deps.store.open(terminalId, sessionId, { accountId: principal.accountId });
  }
  // Another account's terminal, another session's, or one opened before: as if none.
  if (record === undefined) {
    throw new AppError('not_found', 'No such terminal, or it was opened already');
  }
  return record;
}

/** Answers an upgrade that will not happen with the API's error body, and hangs up. */
function refuse(socket: Duplex, requestId: string, err: unknown, logger?: Logger): void {
  const appError = toAppError(err);
  if (appError.code === 'internal_error') {
    logger?.error({ err, requestId }, 'terminal connect failed');
  }
  const body = JSON.stringify(toErrorBody(appError));
  const retryAfter =
    appError.retryAfter === undefined ? '' : `Retry-After: ${appError.retryAfter}\r\n`;
  socket.end(
    `HTTP/1.1 ${appError.httpStatus} ${appError.code}\r\n` +
      'Content-Type: application/json\r\n' +
      `X-Request-Id: ${requestId}\r\n` +
      retryAfter +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}

/** Carries one terminal between its WebSocket and the node. */
function bridge(
  ws: WebSocket,
  agent: AgentClient,
  record: TerminalRecord,
  stopActivity: () => void,
  logger: Logger,
): void {
  let held = false;
  const sendText = (message: unknown): void => ws.send(JSON.stringify(message));
  const terminal = agent.openTerminal(
    { sessionId: record.sessionId, ...record.spec },
    {
      started: (pid) => sendText({ type: 'started', pid }),
      data: (bytes) => {
        ws.send(bytes, { binary: true }, () => {
          if (held && ws.bufferedAmount < HIGH_WATER_BYTES / 4) {
            held = false;
            terminal.resume();
          }
        });
        // A slow client: hold the program's output (back to its pipe) until it catches up.
        if (!held && ws.bufferedAmount > HIGH_WATER_BYTES) {
          held = true;
          terminal.pause();
        }
      },
      exited: (exitCode) => sendText({ type: 'exit', exitCode }),
      ended: () => ws.close(1000, 'exited'),
      failed: (err) => {
        if (ws.readyState !== ws.OPEN) return;
        if (err.code === 'internal_error') logger.error({ err }, 'terminal failed');
        sendText({ type: 'error', error: toErrorBody(err).error });
        ws.close(1011, err.code);
      },
    },
  );
  ws.on('message', (data: RawData, isBinary: boolean) => {
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as Buffer);
    if (isBinary) {
      // Typed faster than the program reads: stop reading the socket until the node takes it.
      if (!terminal.write(bytes)) {
        ws.pause();
        terminal.onceDrained(() => ws.resume());
      }
      return;
    }
    const control = parseControl(bytes.toString('utf8'));
    if (control === undefined) {
      ws.close(1003, 'text messages are JSON controls: {"type":"resize","cols","rows"}');
      return;
    }
    terminal.resize(control.cols, control.rows);
  });
  ws.on('close', () => {
    stopActivity();
    terminal.end(); // the node hangs the program up
  });
  ws.on('error', () => ws.terminate());
}

/** A resize control, or undefined for anything else. */
function parseControl(text: string): { cols: number; rows: number } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const { type, cols, rows } = (value ?? {}) as Record<string, unknown>;
  const valid = (n: unknown): n is number =>
    Number.isInteger(n) && (n as number) >= 1 && (n as number) <= 1000;
  return type === 'resize' && valid(cols) && valid(rows) ? { cols, rows } : undefined;
}
