import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import httpProxy from 'http-proxy';
import { AppError, toAppError, toErrorBody } from '@sandbox/errors';
import type { Logger } from '@sandbox/logger';
import {
  createProxyServer,
  forwardResponse,
  guardUpgrade,
  isSessionId,
  PREVIEW_HEADERS,
  tokenMatches,
} from '@sandbox/contract';
import type { SandboxRuntime } from '../runtime/sandbox-runtime';

export interface PreviewServerDeps {
  runtime: SandboxRuntime;
  logger: Logger;
  internalToken: string | undefined;
}

/** Where a preview request goes; the agent's own headers are taken off it. */
async function target(deps: PreviewServerDeps, req: IncomingMessage): Promise<string> {
  if (deps.internalToken !== undefined) {
    const sent = req.headers[PREVIEW_HEADERS.token];
    if (!tokenMatches(typeof sent === 'string' ? sent : undefined, deps.internalToken)) {
      throw new AppError('unauthorized', 'Invalid internal token');
    }
  }
  const sessionId = req.headers[PREVIEW_HEADERS.session];
  const port = Number(req.headers[PREVIEW_HEADERS.port]);
  if (!isSessionId(sessionId)) {
    throw new AppError('invalid_request', 'Missing or bad session header');
  }
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new AppError('invalid_request', 'Missing or bad port header');
  }
  delete req.headers[PREVIEW_HEADERS.token];
  delete req.headers[PREVIEW_HEADERS.session];
  delete req.headers[PREVIEW_HEADERS.port];
  const host = await deps.runtime.previewHost(sessionId);
  return `http://${host}:${port}`;
}

/** Answers a preview that failed with the error body, marked as the agent's. */
function fail(logger: Logger, res: ServerResponse, err: unknown): void {
  const appError = toAppError(err);
  if (appError.code === 'internal_error') logger.error({ err }, 'preview failed');
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(appError.httpStatus, {
    'content-type': 'application/json',
    [PREVIEW_HEADERS.error]: appError.code,
  });
  res.end(JSON.stringify(toErrorBody(appError)));
}

/**
 * The agent's side of previews: takes requests from the edge proxy (with the internal token),
 * and forwards them, HTTP and WebSocket, to the named port of the named session's container.
 */
export function createPreviewServer(deps: PreviewServerDeps): Server {
  // Responses are passed on by hand: the app is hostile, and http-proxy would copy a status
  // Node refuses to send (an uncaught throw that would end the agent).
  const proxy = httpProxy.createProxyServer({
    ws: true,
    xfwd: false,
    proxyTimeout: 0,
    selfHandleResponse: true,
  });
  proxy.on('proxyRes', (proxyRes, _req, res) => {
    forwardResponse(
      proxyRes,
      res,
      () =>
        fail(
          deps.logger,
          res,
          new AppError('bad_gateway', 'The app answered with an invalid response'),
        ),
      // Only the agent says a preview failed: an app cannot pose as it.
      [PREVIEW_HEADERS.error],
    );
  });
  proxy.on('proxyReqWs', (proxyReq, _req, socket) => guardUpgrade(proxyReq, socket));

  proxy.on('error', (err, _req, res) => {
    if (!('writeHead' in res) || res.headersSent) {
      res.destroy();
      return;
    }
    fail(
      deps.logger,
      res,
      new AppError('bad_gateway', 'Nothing answers on that port', { cause: err }),
    );
  });

  return createProxyServer({
    target: (req) => target(deps, req),
    web: (req, res, url) => proxy.web(req, res, { target: url }),
    ws: (req, socket, head, url) => proxy.ws(req, socket, head, { target: url }),
    refuse: (res, err) => fail(deps.logger, res, err),
  });
}
