import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { keepHandedOver } from '@sandbox/contract';

/** How a proxy server routes: `Target` names a request's upstream. */
export interface ProxyRoutes<Target> {
  /** The upstream of a request; throws to refuse it. */
  target(req: IncomingMessage): Promise<Target>;
  /** Sends a request on to its upstream (http-proxy-3's `web`). */
  web(req: IncomingMessage, res: ServerResponse, target: Target): void;
  /** Sends a WebSocket upgrade on to its upstream (http-proxy-3's `ws`). */
  ws(req: IncomingMessage, socket: Duplex, head: Buffer, target: Target): void;
  /** Answers a request that has no upstream. */
  refuse(res: ServerResponse, err: unknown): void;
  /** Notes an upgrade that has no upstream (its connection is then destroyed). */
  refuseUpgrade?(err: unknown): void;
  /** Serves a request of the proxy's own (a probe); false: not one, it goes upstream. */
  local?(req: IncomingMessage, res: ServerResponse): boolean;
}

/**
 * An HTTP server that sends every request and WebSocket upgrade to the upstream `routes`
 * names. Node's server forgets upgraded connections, so its `closeAllConnections` is extended
 * to end them too: stopping a proxy leaves no WebSocket open.
 */
export function createProxyServer<Target>(routes: ProxyRoutes<Target>): Server {
  const server = createServer((req, res) => {
    if (routes.local?.(req, res) === true) return;
    routes.target(req).then(
      (target) => routes.web(req, res, target),
      (err: unknown) => routes.refuse(res, err),
    );
  });
  const keepUpgraded = keepHandedOver(server);
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    keepUpgraded(socket);
    routes.target(req).then(
      (target) => routes.ws(req, socket, head, target),
      (err: unknown) => {
        routes.refuseUpgrade?.(err);
        socket.destroy();
      },
    );
  });
  return server;
}
