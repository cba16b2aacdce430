import type { IncomingMessage } from 'node:http';
import { AppError } from '@sandbox/errors';
import { PREVIEW_HEADERS, PREVIEW_TOKEN_HEADER } from '@sandbox/contract';
import { parsePreviewHost } from './preview-host';
import type { RouteResolver } from './route-resolver';

export interface PreviewUpstreamOptions {
  previewDomain: string;
  /** Sent to the agent's preview proxy, which refuses requests without it. */
  internalToken: string | undefined;
}

/**
 * Where a visitor's request goes: its Host names the session and port, the gateway names the
 * session's node. Sets the internal headers the agent's preview proxy reads; the URL of that
 * proxy is returned.
 */
export function previewUpstream(resolver: RouteResolver, options: PreviewUpstreamOptions) {
  return async (req: IncomingMessage): Promise<string> => {
    const address = parsePreviewHost(req.headers.host, options.previewDomain);
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
    if (options.internalToken !== undefined) {
      req.headers[PREVIEW_HEADERS.token] = options.internalToken;
    }
    return `http://${route.previewAddress}`;
  };
}
