import cors from 'cors';
import type { RequestHandler } from 'express';

/** Request headers a page may send: the key, bodies, idempotency, stream resumption. */
const ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'Accept',
  'Idempotency-Key',
  'Last-Event-ID',
  'X-Request-Id',
];

/** Response headers a page may read: what the SDK reads besides the body. */
const EXPOSED_HEADERS = [
  'Retry-After',
  'WWW-Authenticate',
  'X-Process-Id',
  'X-Process-Pid',
  'X-Request-Id',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
];

/**
 * CORS for the public API (`/v1`), for pages of `origins` (`*`: any). A page calls with a key
 * in `Authorization`, never with cookies: no credentials are allowed, and a preflight is
 * answered before the key is checked (it carries none). Undefined without origins: browsers
 * then refuse every page's call, as before.
 */
export function apiCors(origins: readonly string[]): RequestHandler | undefined {
  if (origins.length === 0) return undefined;
  return cors({
    origin: origins.includes('*') ? '*' : [...origins],
    methods: ['GET', 'POST', 'PUT', 'DELETE'],
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    credentials: false,
    maxAge: 600,
  });
}
