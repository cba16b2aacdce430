import { Agent, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import httpProxy from 'http-proxy';
import { AppError, isErrorCode } from '@sandbox/errors';
import type { EdgeProxyConfig } from '@sandbox/config';
import type { Logger } from '@sandbox/logger';
import {
  createProxyServer,
  forwardResponse,
  guardUpgrade,
  PREVIEW_HEADERS,
} from '@sandbox/contract';
import { sendErrorPage } from './pages';
import { previewUpstream } from './preview-upstream';
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
  stop(): Promise<void>;
}

/**
 * The proxy towards the agents' preview proxies. The agent's own errors (no such session,
 * nothing on that port) become pages; everything else is the app's response, streamed
 * through untouched.
 */
function createAgentProxy(upstreamAgent: Agent): httpProxy {
  const proxy = httpProxy.createProxyServer({
    ws: true,
    xfwd: true,
    selfHandleResponse: true,
    agent: upstreamAgent,
  });
  proxy.on('proxyRes', (proxyRes, _req, res) => {
    const code = proxyRes.headers[PREVIEW_HEADERS.error];
    if (typeof code === 'string') {
      proxyRes.resume();
      sendErrorPage(res, new AppError(isErrorCode(code) ? code : 'bad_gateway', messageFor(code)));
      return;
    }
    forwardResponse(proxyRes, res, () =>
      sendErrorPage(res, new AppError('bad_gateway', 'The app answered with an invalid response')),
    );
  });
  proxy.on('proxyReqWs', (proxyReq, _req, socket) => guardUpgrade(proxyReq, socket));
  proxy.on('error', (err, _req, res) => {
    if ('writeHead' in res) {
      sendErrorPage(
        res,
        new AppError('bad_gateway', 'The preview could not be reached', { cause: err }),
      );
    } else {
      res.destroy();
    }
  });
  return proxy;
}

/** Preview traffic: host → session → node → the agent's preview proxy → the container port. */
export async function startEdgeProxy({ config, logger }: EdgeProxyDeps): Promise<RunningEdgeProxy> {
  const resolver = new RouteResolver(
    config.gatewayInternalUrl,
    config.internalToken,
    config.upstreamTimeoutMs,
    config.routeCacheMs,
  );
  // Connections to the agents are reused (keep-alive), as the visitors' are.
  const upstreamAgent = new Agent({ keepAlive: true, maxSockets: 256 });
  const proxy = createAgentProxy(upstreamAgent);
  const server: Server = createProxyServer({
    target: previewUpstream(resolver, config),
    web: (req, res, target) => proxy.web(req, res, { target }),
    // Upgrades get a connection of their own, never one from the keep-alive pool.
    ws: (req, socket, head, target) => proxy.ws(req, socket, head, { target, agent: false }),
    refuse: sendErrorPage,
    refuseUpgrade: (err) => logger.debug({ err }, 'websocket preview refused'),
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, resolve);
  });
  const url = `http://${config.host}:${(server.address() as AddressInfo).port}`;
  logger.info({ url, previewDomain: config.previewDomain }, 'edge proxy listening');
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        upstreamAgent.destroy();
      }),
  };
}
