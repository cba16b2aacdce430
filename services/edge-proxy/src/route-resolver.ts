import { AppError } from '@sandbox/errors';

export interface PreviewRoute {
  sessionId: string;
  nodeId: string;
  previewAddress: string;
}

/** Asks the gateway where a session's preview traffic goes. */
export class RouteResolver {
  constructor(
    private readonly gatewayUrl: string,
    private readonly internalToken: string | undefined,
    private readonly timeoutMs: number,
  ) {}

  /** `previewToken`: what the visitor sent as X-Preview-Token (private previews need it). */
  async resolve(sessionId: string, previewToken: string | undefined): Promise<PreviewRoute> {
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
