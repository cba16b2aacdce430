import type { IncomingMessage } from 'node:http';
import { AppError } from '@sandbox/errors';
import { PREVIEW_HEADERS, PREVIEW_TOKEN_HEADER } from '@sandbox/contract';
import { parsePreviewHost } from './preview-host';
import type { TunnelEnd } from './preview-tunnels';
import type { RouteResolver } from './route-resolver';

const INTERNAL_HEADERS = Object.values(PREVIEW_HEADERS);

export interface PreviewUpstreamOptions {
  previewDomain: string;
}

/**
 * Where a visitor's request goes: its Host names the session and port, the gateway names the
 * session's node (and checks a private preview's token). Whatever the client sent under our
 * internal header names, and the preview token, are taken off the request: the app sees
 * neither.
 */
export function previewUpstream(resolver: RouteResolver, options: PreviewUpstreamOptions) {
  return async (req: IncomingMessage): Promise<TunnelEnd> => {
    const address = parsePreviewHost(req.headers.host, options.previewDomain);
    if (address === undefined) {
      throw new AppError('not_found', 'This host is not a session preview');
    }
    for (const header of INTERNAL_HEADERS) delete req.headers[header];
    const token = req.headers[PREVIEW_TOKEN_HEADER];
    delete req.headers[PREVIEW_TOKEN_HEADER];
    const route = await resolver.resolve(
      address.sessionId,
      typeof token === 'string' ? token : undefined,
    );
    return { previewAddress: route.previewAddress, sessionId: route.sessionId, port: address.port };
  };
}
