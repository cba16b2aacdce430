import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createProxyServer as createHttpProxy, type ProxyServer } from 'http-proxy-3';
import { serveMetrics } from '@sandbox/contract';
import { AppError } from '@sandbox/errors';
import type { EdgeProxyConfig } from '@sandbox/config';
import type { Logger } from '@sandbox/logger';
import { EdgeMetrics } from './edge-metrics';
import { sendErrorPage } from './pages';
import { forwardResponse, guardUpgrade } from './preview-http';
import { parsePreviewHost } from './preview-host';
import { PreviewTunnels } from './preview-tunnels';
import { previewUpstream } from './preview-upstream';
import { createProxyServer } from './proxy-server';
import { RouteResolver } from './route-resolver';

function messageFor(code: string): string {
  switch (code) {
    case 'bad_gateway':
      return 'Nothing in the session is listening on this port.';
    case 'session_not_found':
      return 'This session does not exist or has ended.';
    default:
      return 'The preview could not be served.';
  }
}

export interface EdgeProxyDeps {
  config: EdgeProxyConfig;
  logger: Logger;
}

export interface RunningEdgeProxy {
  readonly url: string;
  /** `host:port` of its `/metrics` listener (METRICS_PORT); absent without one. */
  readonly metricsAddress: string | undefined;
  stop(): Promise<void>;
}

/**
 * The proxy towards the apps, through the agents' tunnels. A tunnel the agent refused (no
 * such session, nothing on that port) becomes a page; everything else is the app's
 * response, checked (the app is hostile) and streamed through.
 */
function createAppProxy(): ProxyServer {
  const proxy = createHttpProxy({ ws: true, xfwd: true, selfHandleResponse: true });
  proxy.on('proxyRes', (proxyRes, _req, res) => {
    forwardResponse(proxyRes, res, () =>
      sendErrorPage(res, new AppError('bad_gateway', 'The app answered with an invalid response')),
    );
  });
  proxy.on('proxyReqWs', (proxyReq, _req, socket) => guardUpgrade(proxyReq, socket));
  proxy.on('error', (err, _req, res) => {
    if (!('writeHead' in res)) {
      res.destroy();
      return;
    }
    const code = err instanceof AppError ? err.code : 'bad_gateway';
    sendErrorPage(res, new AppError(code, messageFor(code), { cause: err }));
  });
  return proxy;
}

/**
 * `/healthz` (the process serves) and `/readyz` (the gateway answers too) for a Host that is
 * no preview (a probe by pod address): a preview's own paths are never shadowed.
 */
function probes(config: EdgeProxyConfig) {
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    const path = req.url?.split('?')[0];
    if (path !== '/healthz' && path !== '/readyz') return false;
    if (parsePreviewHost(req.headers.host, config.previewDomain) !== undefined) return false;
    const answer = (ok: boolean) =>
      res
        .writeHead(ok ? 200 : 503, { 'content-type': 'application/json' })
        .end(JSON.stringify({ status: ok ? 'ok' : 'unavailable' }));
    if (path === '/healthz') {
      answer(true);
      return true;
    }
    fetch(new URL('/healthz', config.gatewayInternalUrl), { signal: AbortSignal.timeout(2000) })
      .then((response) => answer(response.ok))
      .catch(() => answer(false));
    return true;
  };
}

/** Preview traffic: host → session → node → the agent's preview proxy → the container port. */
export async function startEdgeProxy({ config, logger }: EdgeProxyDeps): Promise<RunningEdgeProxy> {
  const resolver = new RouteResolver(
    config.gatewayInternalUrl,
    config.internalToken,
    config.upstreamTimeoutMs,
    config.routeCacheMs,
  );
  // Tunnels to apps are reused (keep-alive), as the visitors' connections are.
  const tunnels = new PreviewTunnels(config.internalToken);
  const proxy = createAppProxy();
  const server: Server = createProxyServer({
    target: previewUpstream(resolver, config),
    web: (req, res, end) =>
      proxy.web(req, res, { target: `http://${end.previewAddress}`, agent: tunnels.poolFor(end) }),
    // Upgrades get a tunnel of their own, never one from the keep-alive pool.
    ws: (req, socket, head, end) =>
      proxy.ws(req, socket, head, {
        target: `http://${end.previewAddress}`,
        agent: tunnels.single(end),
      }),
    refuse: sendErrorPage,
    refuseUpgrade: (err) => logger.debug({ err }, 'websocket preview refused'),
    local: probes(config),
  });

  const metrics = new EdgeMetrics();
  metrics.watch(server);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, resolve);
  });
  const url = `http://${config.host}:${(server.address() as AddressInfo).port}`;
  const metricsServer =
    config.metrics.port === undefined
      ? undefined
      : await serveMetrics(metrics.registry, { ...config.metrics, port: config.metrics.port });
  logger.info({ url, previewDomain: config.previewDomain }, 'edge proxy listening');
  return {
    url,
    metricsAddress: metricsServer?.address,
    async stop() {
      await metricsServer?.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        tunnels.destroy();
      });
    },
  };
}
