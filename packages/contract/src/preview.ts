import { z } from 'zod';
import { isSessionId, SESSION_ID_PATTERN } from './ids';

/** The header a private preview needs (decisions.md); never logged, never passed to the app. */
export const PREVIEW_TOKEN_HEADER = 'x-preview-token';

/** Longer X-Preview-Token values are refused without a lookup. */
export const MAX_PREVIEW_TOKEN_LENGTH = 256;

/**
 * HTTP headers between the edge proxy and an agent's preview proxy, on a tunnel's opening
 * request and its answer only (never on a visitor's request: the edge drops whatever a
 * client sent under these names).
 */
export const PREVIEW_HEADERS = {
  token: 'x-sandbox-internal-token',
  /** On an agent's refusal of a tunnel: the error code (the body is the error JSON). */
  error: 'x-sandbox-preview-error',
} as const;

/**
 * A preview tunnel: the edge asks an agent's preview proxy for a connection to one port of
 * one session's container with `CONNECT <sessionId>:<port>` and the internal token; the
 * agent answers 200 and from then on passes bytes both ways, or refuses with an error status
 * and PREVIEW_HEADERS.error. The edge then speaks HTTP to the app itself, and keeps the
 * tunnel for that session's port only (docs/adr/0018-preview-tunnels.md).
 */
export interface PreviewTunnelTarget {
  sessionId: string;
  port: number;
}

/** The request target of a tunnel's CONNECT. */
export const previewTunnelTarget = ({ sessionId, port }: PreviewTunnelTarget): string =>
  `${sessionId}:${port}`;

/** A CONNECT request target back to its session and port; undefined unless well formed. */
export function parsePreviewTunnelTarget(
  target: string | undefined,
): PreviewTunnelTarget | undefined {
  const match = /^([^:]+):(\d{1,5})$/.exec(target ?? '');
  if (match === null || !isSessionId(match[1])) return undefined;
  const port = Number(match[2]);
  if (port < 1 || port > 65535) return undefined;
  return { sessionId: match[1], port };
}

/** The gateway's internal preview route lookup, for the edge proxy. */
export const previewRoutePath = (sessionId: string): string =>
  `/internal/v1/previews/${encodeURIComponent(sessionId)}`;

/** Where a session's preview traffic goes: the gateway's answer to the edge proxy. */
export const previewRouteSchema = z.object({
  sessionId: z.string().regex(SESSION_ID_PATTERN),
  nodeId: z.string().min(1),
  /** host:port of the node's preview proxy. */
  previewAddress: z.string().min(1),
  /** The session's preview needs X-Preview-Token. */
  private: z.boolean(),
});

export type PreviewRoute = z.infer<typeof previewRouteSchema>;
