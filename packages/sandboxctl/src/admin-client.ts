import { AppError, isErrorCode } from '@sandbox/errors';

/** A thin client of the gateway's admin API. */
export class AdminClient {
  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {}

  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    let response: Response;
    try {
      response = await this.fetchImpl(`${this.baseUrl}/admin/v1${path}`, {
        method,
        headers: {
          authorization: `Bearer ${this.token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (err) {
      throw new AppError('service_unavailable', `Cannot reach the gateway at ${this.baseUrl}`, {
        cause: err,
      });
    }
    const payload = (await response.json().catch(() => undefined)) as
      | { error?: { code?: unknown; message?: string; details?: Record<string, unknown> } }
      | undefined;
    if (!response.ok) {
      const code = payload?.error?.code;
      throw new AppError(
        isErrorCode(code) ? code : 'internal_error',
        payload?.error?.message ?? `HTTP ${response.status}`,
        { details: payload?.error?.details ?? {} },
      );
    }
    return payload as T;
  }
}
