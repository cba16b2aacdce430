import { Agent, type IncomingMessage, type Server } from 'node:http';
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
  PREVIEW_TOKEN_HEADER,
} from '@sandbox/contract';
import { sendErrorPage } from './pages';
import { parsePreviewHost } from './preview-host';
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
  const proxy = httpProxy.createProxyServer({
    ws: true,
    xfwd: true,
    selfHandleResponse: true,
    agent: upstreamAgent,
  });

  // The agent's own errors (no such session, nothing on that port) become pages; everything
  // else is the app's response, streamed through untouched.
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

  async function upstream(req: IncomingMessage): Promise<string> {
    const address = parsePreviewHost(req.headers.host, config.previewDomain);
    if (address === undefined) {
      throw new AppError('not_found', 'This host is not a session preview');
    }
    // Whatever the client sent under our internal header names is dropped, and the preview
    // token goes to the gateway only, not on to the app.
    for (const header of Object.values(PREVIEW_HEADERS)) delete req.headers[header];
    const token = req.headers[PREVIEW_TOKEN_HEADER];
    delete req.headers[PREVIEW_TOKEN_HEADER];
    const route = await resolver.resolve(
      address.sessionId,
      typeof token === 'string' ? token : undefined,
    );
    req.headers[PREVIEW_HEADERS.session] = route.sessionId;
    req.headers[PREVIEW_HEADERS.port] = String(address.port);
    if (config.internalToken !== undefined)
      req.headers[PREVIEW_HEADERS.token] = config.internalToken;
    return `http://${route.previewAddress}`;
  }

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

  const server: Server = createProxyServer({
    target: upstream,
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
