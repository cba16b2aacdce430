import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { bearerToken, tokenMatches } from './tokens';

/** What a metrics endpoint serves: a prom-client Registry fits. */
export interface MetricsSource {
  readonly contentType: string;
  metrics(): Promise<string>;
}

export interface MetricsServerOptions {
  host: string;
  port: number;
  /** When set, a scrape must send `Authorization: Bearer <token>`. */
  token: string | undefined;
}

export interface RunningMetricsServer {
  /** `host:port` it listens on. */
  readonly address: string;
  stop(): Promise<void>;
}

/**
 * Serves `GET /metrics` (Prometheus text format) on a port of its own: a service's metrics
 * never share its public listener, and where the network is not trusted a token guards them.
 */
export async function serveMetrics(
  source: MetricsSource,
  options: MetricsServerOptions,
): Promise<RunningMetricsServer> {
  const server: Server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    if (options.token !== undefined) {
      if (!tokenMatches(bearerToken(req.headers.authorization), options.token)) {
        res.writeHead(401, { 'content-type': 'text/plain' }).end('unauthorized\n');
        return;
      }
    }
    source.metrics().then(
      (text) => res.writeHead(200, { 'content-type': source.contentType }).end(text),
      () => res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics failed\n'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    address: `${options.host}:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
