import { AppError } from '@sandbox/errors';

export interface PreviewRoute {
  sessionId: string;
  nodeId: string;
  previewAddress: string;
}

/** Routes kept at most; the oldest go first. */
const MAX_CACHED_ROUTES = 10_000;

/**
 * Asks the gateway where a session's preview traffic goes. An answer is reused for `cacheMs`
 * (per session and token), so that a page loading fifty assets costs one lookup; the lookup
 * is also what records the session's activity, and a second's delay there changes nothing.
 */
export class RouteResolver {
  private readonly cache = new Map<string, { route: PreviewRoute; until: number }>();

  constructor(
    private readonly gatewayUrl: string,
    private readonly internalToken: string | undefined,
    private readonly timeoutMs: number,
    private readonly cacheMs = 0,
  ) {}

  /** `previewToken`: what the visitor sent as X-Preview-Token (private previews need it). */
  async resolve(sessionId: string, previewToken: string | undefined): Promise<PreviewRoute> {
    if (this.cacheMs === 0) return this.lookup(sessionId, previewToken);
    const key = `${sessionId}\0${previewToken ?? ''}`;
    const cached = this.cache.get(key);
    if (cached !== undefined && cached.until > Date.now()) return cached.route;
    this.cache.delete(key);
    const route = await this.lookup(sessionId, previewToken);
    if (this.cache.size >= MAX_CACHED_ROUTES) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
    this.cache.set(key, { route, until: Date.now() + this.cacheMs });
    return route;
  }

  private async lookup(sessionId: string, previewToken: string | undefined): Promise<PreviewRoute> {
    const headers: Record<string, string> = {};
    if (this.internalToken !== undefined) headers.authorization = `Bearer ${this.internalToken}`;
    if (previewToken !== undefined) headers['x-preview-token'] = previewToken;
    let response: Response;
    try {
      response = await fetch(
        `${this.gatewayUrl}/internal/v1/previews/${encodeURIComponent(sessionId)}`,
        { headers, signal: AbortSignal.timeout(this.timeoutMs) },
      );
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
    return (await response.json()) as PreviewRoute;
  }
}
