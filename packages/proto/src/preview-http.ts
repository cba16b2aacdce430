import type { IncomingMessage, ServerResponse } from 'node:http';

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
): void {
  const status = upstream.statusCode ?? 0;
  if (!Number.isInteger(status) || status < 100 || status > 599) {
    upstream.destroy();
    onInvalid();
    return;
  }
  try {
    res.writeHead(status, endToEndHeaders(upstream.rawHeaders));
  } catch {
    upstream.destroy();
    onInvalid();
    return;
  }
  upstream.on('error', () => res.destroy());
  upstream.pipe(res);
}
