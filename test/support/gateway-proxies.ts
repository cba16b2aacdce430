import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Servers between an SDK and the gateway, to script its answers or cut its connections. */

/** Sends a request a test proxy received on to the gateway. */
function forward(gateway: string, req: IncomingMessage, body: Buffer[]): Promise<Response> {
  const headers = Object.fromEntries(
    Object.entries(req.headers).filter(
      ([name]) => !['host', 'content-length', 'connection'].includes(name),
    ),
  ) as Record<string, string>;
  return fetch(`${gateway}${req.url}`, {
    method: req.method,
    headers,
    body: req.method === 'GET' || req.method === 'HEAD' ? undefined : Buffer.concat(body),
  });
}

/** A server in front of the gateway: `handle` answers each request, given its whole body. */
async function proxyServer(
  handle: (req: IncomingMessage, body: Buffer[], res: ServerResponse) => Promise<void>,
): Promise<{ server: Server; url: string }> {
  const server: Server = createServer((req, res) => {
    const body: Buffer[] = [];
    req.on('data', (chunk: Buffer) => body.push(chunk));
    req.on('end', () => void handle(req, body, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` };
}

/**
 * A proxy in front of the gateway at `gateway` that answers each request from `script` first (a status,
 * or 'lose' for one forwarded whose answer is replaced by a 503), then forwards the rest.
 */
export async function scriptedProxy(
  gateway: string,
  script: Array<{ path: string; answer: number | 'lose'; retryAfter?: string }>,
) {
  const forwarded: string[] = [];
  const { server, url } = await proxyServer(async (req, body, res) => {
    const step = script.findIndex((s) => req.url?.includes(s.path));
    const planned = step >= 0 ? script.splice(step, 1)[0] : undefined;
    if (planned !== undefined && planned.answer !== 'lose') {
      res.writeHead(
        planned.answer,
        planned.retryAfter === undefined ? {} : { 'retry-after': planned.retryAfter },
      );
      res.end(
        JSON.stringify({
          error: {
            code: planned.answer === 429 ? 'rate_limit_exceeded' : 'service_unavailable',
            message: 'scripted',
          },
        }),
      );
      return;
    }
    forwarded.push(`${req.method} ${req.url}`);
    const answer = await forward(gateway, req, body);
    const text = await answer.text();
    if (planned?.answer === 'lose') {
      res.writeHead(503, { 'retry-after': '0' });
      res.end(JSON.stringify({ error: { code: 'service_unavailable', message: 'answer lost' } }));
      return;
    }
    res.writeHead(answer.status, {
      'content-type': answer.headers.get('content-type') ?? 'application/json',
    });
    res.end(text);
  });
  return { url, forwarded, close: () => new Promise((resolve) => server.close(resolve)) };
}

/**
 * A proxy in front of the gateway at `gateway` that streams each answer through, but cuts the connection
 * of the first streamed execute after `cutAfter` bytes of its body (`stall`: keeps it open
 * and sends nothing more, as a connection that hangs).
 */
export async function cuttingProxy(
  gateway: string,
  cutAfter: number,
  mode: 'cut' | 'stall' = 'cut',
) {
  let cut = false;
  const seen: string[] = [];
  const { server, url } = await proxyServer(async (req, body, res) => {
    seen.push(`${req.method} ${req.url} ${String(req.headers['last-event-id'] ?? '')}`);
    const answer = await forward(gateway, req, body);
    res.writeHead(answer.status, Object.fromEntries(answer.headers.entries()));
    const cutting = !cut && (answer.headers.get('content-type') ?? '').includes('event-stream');
    if (cutting) cut = true;
    let sent = 0;
    const reader = (answer.body as ReadableStream<Uint8Array>).getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      if (cutting && sent + value.length > cutAfter) {
        res.write(value.subarray(0, Math.max(0, cutAfter - sent)));
        await reader.cancel();
        if (mode === 'cut') res.socket?.destroy();
        return;
      }
      sent += value.length;
      res.write(value);
    }
    res.end();
  });
  return {
    url,
    seen,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A server that accepts connections and never answers. */
export async function silentServer() {
  const server: Server = createServer(() => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return {
    url,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}
