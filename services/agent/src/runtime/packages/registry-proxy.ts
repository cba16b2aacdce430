import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { listenOnEphemeralPort } from '../network/listen';
import type { Logger } from '@sandbox/logger';

/** Where a request through the proxy goes: a host and a port. */
export interface Target {
  host: string;
  port: number;
}

/** The host and port of `url` (its scheme's default port when it names none). */
export function targetOf(url: URL): Target {
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  return { host: url.hostname.toLowerCase().replace(/^\[|\]$/g, ''), port };
}

/** `host:port` of a CONNECT request, if well formed. */
export function connectTarget(authority: string): Target | undefined {
  const match = /^(\[[0-9a-f:.]+\]|[^\s:[\]/@]+):(\d{1,5})$/i.exec(authority);
  if (match === null) return undefined;
  const port = Number(match[2]);
  if (port < 1 || port > 65535) return undefined;
  return { host: (match[1] ?? '').toLowerCase().replace(/^\[|\]$/g, ''), port };
}

/** Whether `target` is the registry: its very host name (or address) and port, nothing else. */
export function isRegistry(registry: URL, target: Target): boolean {
  const allowed = targetOf(registry);
  return target.host === allowed.host && target.port === allowed.port;
}

/**
 * The only way out of a package installer's container (installer.ts): an HTTP proxy that
 * carries CONNECT tunnels (https) and plain requests (http) to the configured registry, and
 * refuses every other destination with 403. Its host names are resolved here, on the node, so
 * the installer needs no DNS either. It listens on the installer network's gateway address,
 * which only installer containers can reach from inside Docker.
 */
export class RegistryProxy {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();

  constructor(
    private readonly registry: URL,
    private readonly logger: Logger,
  ) {
    this.server = createServer((req, res) => {
      const target = absoluteTarget(req);
      if (target === undefined || req.url === undefined) {
        res.writeHead(400).end('only absolute http:// URLs or CONNECT\n');
        return;
      }
      if (!isRegistry(this.registry, target.target)) {
        this.refused(target.target);
        res.writeHead(403).end(`only the package registry ${this.registry.origin} is reachable\n`);
        return;
      }
      const upstream = request(
        {
          host: target.target.host,
          port: target.target.port,
          method: req.method,
          path: target.path,
          headers: req.headers,
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
    this.server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
      this.track(client);
      const target = connectTarget(req.url ?? '');
      if (target === undefined || !isRegistry(this.registry, target)) {
        if (target !== undefined) this.refused(target);
        client.end(
          `HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\nonly the package registry ${this.registry.origin} is reachable\n`,
        );
        return;
      }
      const upstream = connect(target.port, target.host, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length > 0) upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      this.track(upstream);
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
    });
    this.server.on('connection', (socket: Socket) => this.track(socket));
  }

  /** Starts listening on `host` (an ephemeral port); returns the port. */
  listen(host: string): Promise<number> {
    return listenOnEphemeralPort(this.server, host);
  }

  close(): void {
    this.server.close();
    for (const socket of this.sockets) socket.destroy();
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }

  private refused(target: Target): void {
    this.logger.warn(
      { host: target.host, port: target.port },
      'package installer: refused a destination other than the registry',
    );
  }
}

/** The target and path of a proxied plain-http request (`GET http://host/path`). */
function absoluteTarget(req: IncomingMessage): { target: Target; path: string } | undefined {
  let url: URL;
  try {
    url = new URL(req.url ?? '');
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:') return undefined;
  return { target: targetOf(url), path: `${url.pathname}${url.search}` };
}
