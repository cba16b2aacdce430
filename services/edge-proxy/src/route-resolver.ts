import { createHash } from 'node:crypto';
import {
  bearer,
  MAX_PREVIEW_TOKEN_LENGTH,
  PREVIEW_TOKEN_HEADER,
  previewRoutePath,
  previewRouteSchema,
  type PreviewRoute,
} from '@sandbox/contract';
import { AppError } from '@sandbox/errors';

/** Routes kept at most; the oldest go first. */
const MAX_CACHED_ROUTES = 10_000;

/**
 * Asks the gateway where a session's preview traffic goes. An answer is reused for `cacheMs`,
 * so that a page loading fifty assets costs one lookup; the lookup is also what records the
 * session's activity, and a second's delay there changes nothing. A public session's route is
 * kept per session (whatever token a visitor sends); a private one's per session and sha256
 * of the token that opened it. Concurrent lookups of one key share one request.
 */
export class RouteResolver {
  private readonly cache = new Map<string, { route: PreviewRoute; until: number }>();
  private readonly inFlight = new Map<string, Promise<PreviewRoute>>();

  constructor(
    private readonly gatewayUrl: string,
    private readonly internalToken: string | undefined,
    private readonly timeoutMs: number,
    private readonly cacheMs = 0,
  ) {}

  /** `previewToken`: what the visitor sent as X-Preview-Token (private previews need it). */
  async resolve(sessionId: string, previewToken: string | undefined): Promise<PreviewRoute> {
    if (previewToken !== undefined && previewToken.length > MAX_PREVIEW_TOKEN_LENGTH) {
      throw new AppError('forbidden', 'This preview is private: send its X-Preview-Token header.');
    }
    if (this.cacheMs === 0) return this.lookup(sessionId, previewToken);
    const publicKey = sessionId;
    const privateKey =
      previewToken === undefined
        ? undefined
        : `${sessionId}:${createHash('sha256').update(previewToken).digest('base64url')}`;
    for (const key of [publicKey, privateKey]) {
      const cached = key === undefined ? undefined : this.cache.get(key);
      if (cached !== undefined && cached.until > Date.now()) return cached.route;
    }
    const flightKey = privateKey ?? publicKey;
    let pending = this.inFlight.get(flightKey);
    if (pending === undefined) {
      pending = this.lookup(sessionId, previewToken).finally(() => this.inFlight.delete(flightKey));
      this.inFlight.set(flightKey, pending);
    }
    const route = await pending;
    // Kept per session only when the gateway says the preview is public (fails closed).
    const key = route.private === false ? publicKey : privateKey;
    if (key !== undefined) this.remember(key, route);
    return route;
  }

  private remember(key: string, route: PreviewRoute): void {
    this.cache.delete(key);
    if (this.cache.size >= MAX_CACHED_ROUTES) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
    this.cache.set(key, { route, until: Date.now() + this.cacheMs });
  }

  private async lookup(sessionId: string, previewToken: string | undefined): Promise<PreviewRoute> {
    const headers: Record<string, string> = {};
    if (this.internalToken !== undefined) headers.authorization = bearer(this.internalToken);
    if (previewToken !== undefined) headers[PREVIEW_TOKEN_HEADER] = previewToken;
    let response: Response;
    try {
      response = await fetch(`${this.gatewayUrl}${previewRoutePath(sessionId)}`, {
        headers,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      throw new AppError('service_unavailable', 'The control plane did not answer', {
        cause: err,
        retryAfter: 2,
      });
    }
    if (response.status === 404) {
      throw new AppError('session_not_found', 'Session not found', { details: { sessionId } });
    }
    if (response.status === 403) {
      throw new AppError('forbidden', 'This preview is private: send its X-Preview-Token header.', {
        details: { sessionId },
      });
    }
    if (!response.ok) {
      throw new AppError('service_unavailable', `Preview routing failed (${response.status})`, {
        retryAfter: 2,
      });
    }
    const route = previewRouteSchema.safeParse(await response.json().catch(() => undefined));
    if (!route.success) {
      throw new AppError('service_unavailable', 'Preview routing answered an invalid route', {
        retryAfter: 2,
      });
    }
    return route.data;
  }
}
