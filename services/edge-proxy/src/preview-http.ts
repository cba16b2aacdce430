import type { ClientRequest, IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { closeTogether } from '@sandbox/contract';

/** Hop-by-hop headers (RFC 9110 7.6.1) describe one connection and are not passed on. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
]);

/** A raw header list without hop-by-hop headers (nor those its Connection header names). */
export function endToEndHeaders(raw: readonly string[]): string[] {
  const named = new Set<string>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]?.toLowerCase() === 'connection') {
      for (const token of (raw[i + 1] ?? '').split(',')) named.add(token.trim().toLowerCase());
    }
  }
  const kept: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] as string).toLowerCase();
    if (!HOP_BY_HOP.has(name) && !named.has(name))
      kept.push(raw[i] as string, raw[i + 1] as string);
  }
  return kept;
}

/**
 * Passes an upstream response on, streamed. The upstream is an app inside a sandbox, so it is
 * hostile: a status outside 100–599 or a header Node refuses to send is not forwarded (Node
 * would throw, and an uncaught throw would take the whole process down); `onInvalid` answers
 * instead. The upstream's reason phrase is never forwarded.
 */
export function forwardResponse(
  upstream: IncomingMessage,
  res: ServerResponse,
  onInvalid: () => void,
  dropHeaders: readonly string[] = [],
): void {
  // A visitor who leaves ends the upstream exchange too (nothing stays open behind it).
  res.on('close', () => {
    if (!res.writableFinished) upstream.destroy();
  });
  const status = upstream.statusCode ?? 0;
  if (!Number.isInteger(status) || status < 100 || status > 599) {
    upstream.destroy();
    onInvalid();
    return;
  }
  try {
    const headers = endToEndHeaders(upstream.rawHeaders);
    const kept: string[] = [];
    for (let i = 0; i + 1 < headers.length; i += 2) {
      const name = headers[i] as string;
      if (!dropHeaders.includes(name.toLowerCase())) kept.push(name, headers[i + 1] as string);
    }
    res.writeHead(status, kept);
  } catch {
    upstream.destroy();
    onInvalid();
    return;
  }
  upstream.on('error', () => res.destroy());
  upstream.pipe(res);
}

/**
 * Guards a proxied WebSocket upgrade (http-proxy-3's `proxyReqWs` event): an upstream that
 * answers without upgrading gets the visitor a plain 502 on a closed connection (never its
 * raw bytes on a connection that might be reused), and once upgraded, either side closing or
 * ending closes both (no half-open sockets left behind).
 */
export function guardUpgrade(upstreamRequest: ClientRequest, visitor: Duplex): void {
  upstreamRequest.prependListener('response', (response: IncomingMessage) => {
    response.destroy();
    if (!visitor.destroyed) {
      visitor.end('HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    }
    setImmediate(() => visitor.destroy());
  });
  upstreamRequest.prependListener('upgrade', (_response: IncomingMessage, upstream: Duplex) => {
    closeTogether(upstream, visitor, ['end', 'close']);
  });
  visitor.on('close', () => upstreamRequest.destroy());
}
