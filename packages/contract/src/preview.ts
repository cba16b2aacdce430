import { z } from 'zod';
import { SESSION_ID_PATTERN } from './ids';

/** The header a private preview needs (decisions.md); never logged, never passed to the app. */
export const PREVIEW_TOKEN_HEADER = 'x-preview-token';

/** Longer X-Preview-Token values are refused without a lookup. */
export const MAX_PREVIEW_TOKEN_LENGTH = 256;

/**
 * HTTP headers between the edge proxy and an agent's preview proxy. The edge drops whatever a
 * client sent under these names; the agent strips them before the request reaches a sandbox.
 */
export const PREVIEW_HEADERS = {
  token: 'x-sandbox-internal-token',
  session: 'x-sandbox-session',
  port: 'x-sandbox-port',
  /** On an agent's own error response: the error code (the body is the error JSON). */
  error: 'x-sandbox-preview-error',
} as const;

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
