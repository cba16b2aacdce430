import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { AppError, toAppError, toErrorBody } from '@sandbox/errors';
import type { Logger } from '@sandbox/logger';
import {
  closeTogether,
  keepHandedOver,
  parsePreviewTunnelTarget,
  PREVIEW_HEADERS,
  tokenMatches,
  type PreviewTunnelTarget,
} from '@sandbox/contract';
import type { SandboxRuntime } from '../runtime/sandbox-runtime';

export interface PreviewServerDeps {
  runtime: Pick<SandboxRuntime, 'previewHost'>;
  logger: Logger;
  internalToken: string | undefined;
}

/** The session port a tunnel request names, once its internal token is checked. */
function tunnelTarget(deps: PreviewServerDeps, req: IncomingMessage): PreviewTunnelTarget {
  if (deps.internalToken !== undefined) {
    const sent = req.headers[PREVIEW_HEADERS.token];
    if (!tokenMatches(typeof sent === 'string' ? sent : undefined, deps.internalToken)) {
      throw new AppError('unauthorized', 'Invalid internal token');
    }
  }
  const target = parsePreviewTunnelTarget(req.url);
  if (target === undefined) {
    throw new AppError('invalid_request', 'A tunnel names a session and a port: <session>:<port>');
  }
  return target;
}

/** The raw HTTP answer of a refused tunnel: the error body, marked as the agent's. */
function refusal(logger: Logger, err: unknown): string {
  const appError = toAppError(err);
  if (appError.code === 'internal_error') logger.error({ err }, 'preview tunnel failed');
  const body = JSON.stringify(toErrorBody(appError));
  return [
    `HTTP/1.1 ${appError.httpStatus} ${appError.code}`,
    'content-type: application/json',
    `content-length: ${Buffer.byteLength(body)}`,
    `${PREVIEW_HEADERS.error}: ${appError.code}`,
    'connection: close',
    '',
    body,
  ].join('\r\n');
}

/** Connects to the session's port; rejects (as the agent's error) when nothing answers there. */
async function connectToSandbox(
  deps: PreviewServerDeps,
  { sessionId, port }: PreviewTunnelTarget,
): Promise<Socket> {
  // Wakes a paused session and heals a vanished container, as every other call does.
  const host = await deps.runtime.previewHost(sessionId);
  return new Promise((resolve, reject) => {
    const upstream = connect({ host, port, noDelay: true });
    upstream.once('connect', () => resolve(upstream));
    // Stays until the splice listens: an error after the connection is a no-op here.
    upstream.on('error', (err) =>
      reject(new AppError('bad_gateway', 'Nothing answers on that port', { cause: err })),
    );
  });
}

/** From now on, bytes pass both ways; either side closing or ending closes both. */
function splice(visitor: Duplex, upstream: Socket, head: Buffer): void {
  closeTogether(upstream, visitor);
  if (head.length > 0) upstream.write(head);
  visitor.pipe(upstream);
  upstream.pipe(visitor);
}

/**
 * The agent's side of previews: opens tunnels for the edge proxy (with the internal token) to
 * the named port of the named session's container, and then only passes bytes. HTTP and
 * WebSockets inside a tunnel are the edge's to read: the agent parses nothing an app sends,
 * and its per-request work is gone (docs/adr/0018-preview-tunnels.md).
 */
export function createPreviewServer(deps: PreviewServerDeps): Server {
  const server = createServer((_req: IncomingMessage, res: ServerResponse) => {
    const err = new AppError('invalid_request', 'The preview proxy only opens tunnels (CONNECT)');
    res.writeHead(err.httpStatus, {
      'content-type': 'application/json',
      [PREVIEW_HEADERS.error]: err.code,
    });
    res.end(JSON.stringify(toErrorBody(err)));
  });
  // Node's server forgets connections it has handed over; stopping the agent ends them too.
  const keepTunnel = keepHandedOver(server);
  server.on('connect', (req: IncomingMessage, visitor: Duplex, head: Buffer) => {
    keepTunnel(visitor);
    (async () => {
      const upstream = await connectToSandbox(deps, tunnelTarget(deps, req));
      if (visitor.destroyed) {
        upstream.destroy();
        return;
      }
      (visitor as Socket).setNoDelay?.(true);
      visitor.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      splice(visitor, upstream, head);
    })().catch((err: unknown) => {
      if (!visitor.destroyed) visitor.end(refusal(deps.logger, err));
    });
  });
  // Upgrades travel inside tunnels; one sent here has no tunnel.
  server.on('upgrade', (_req: IncomingMessage, socket: Duplex) => socket.destroy());
  return server;
}
