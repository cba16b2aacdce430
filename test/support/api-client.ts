import { call, type ApiResponse } from './api';

/** Where a client sends its requests: read at each request, so a restarted gateway is found. */
export interface GatewayAddress {
  readonly url: string;
}

type Body = Record<string, unknown>;

/**
 * The public API as one key sees it, on one gateway: each method is one request, answered as it
 * came (status, headers, body), so tests assert on exactly what a user would observe.
 */
export class ApiClient {
  constructor(
    private readonly gateway: GatewayAddress,
    readonly key: string,
  ) {}

  get<T = Body>(path: string, headers?: Record<string, string>): Promise<ApiResponse<T>> {
    return call<T>(`${this.gateway.url}${path}`, {
      key: this.key,
      ...(headers ? { headers } : {}),
    });
  }

  /** A POST of `body` as JSON (none when undefined). */
  post<T = Body>(
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<ApiResponse<T>> {
    return call<T>(`${this.gateway.url}${path}`, {
      method: 'POST',
      key: this.key,
      body,
      ...(headers ? { headers } : {}),
    });
  }

  /** A PUT of `body` as JSON. */
  put<T = Body>(path: string, body: unknown): Promise<ApiResponse<T>> {
    return call<T>(`${this.gateway.url}${path}`, { method: 'PUT', key: this.key, body });
  }

  delete<T = Body>(path: string): Promise<ApiResponse<T>> {
    return call<T>(`${this.gateway.url}${path}`, { method: 'DELETE', key: this.key });
  }

  /** A new session; returns its id (throws unless created). */
  async createSession(body: Body = {}): Promise<string> {
    const created = await this.post<{ sessionId: string }>('/v1/sessions/create', body);
    if (created.status !== 200) throw new Error(`session creation failed: ${created.text}`);
    return created.body.sessionId;
  }

  session<T = Body>(sessionId: string): Promise<ApiResponse<T>> {
    return this.get<T>(`/v1/sessions/${sessionId}`);
  }

  deleteSession(sessionId: string): Promise<ApiResponse> {
    return this.delete(`/v1/sessions/${sessionId}`);
  }

  /** One run, answered as a whole. */
  execute<T = Body>(sessionId: string, body: Body): Promise<ApiResponse<T>> {
    return this.post<T>('/v1/execute', { sessionId, ...body });
  }

  /** One streamed run: the raw response, to read its events as they come. */
  executeStream(
    sessionId: string,
    body: Body,
    signal?: AbortSignal,
    headers: Record<string, string> = {},
  ): Promise<Response> {
    return fetch(`${this.gateway.url}/v1/execute`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${this.key}`,
        'content-type': 'application/json',
        ...headers,
      },
      body: JSON.stringify({ sessionId, ...body, stream: true }),
      ...(signal ? { signal } : {}),
    });
  }

  /** A run's output as Server-Sent Events (the raw response), from `Last-Event-ID` if given. */
  outputStream(sessionId: string, pid: string | number, lastEventId?: string): Promise<Response> {
    return fetch(`${this.gateway.url}/v1/sessions/${sessionId}/processes/${pid}/output`, {
      headers: {
        authorization: `Bearer ${this.key}`,
        accept: 'text/event-stream',
        ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }),
      },
    });
  }

  /** Kills the process `pid` with its children, or every process of the session. */
  kill<T = Body>(sessionId: string, pid?: number): Promise<ApiResponse<T>> {
    return this.post<T>('/v1/execution/kill', {
      sessionId,
      ...(pid === undefined ? {} : { pid }),
    });
  }

  writeFile(sessionId: string, path: string, content: string, extra: Body = {}) {
    return this.post('/v1/files/write', { sessionId, path, content, ...extra });
  }

  /** A file's raw response: its bytes are the body, unparsed. */
  readFile(sessionId: string, path: string, signal?: AbortSignal): Promise<Response> {
    const query = `sessionId=${sessionId}&path=${encodeURIComponent(path)}`;
    return fetch(`${this.gateway.url}/v1/files/read?${query}`, {
      headers: { authorization: `Bearer ${this.key}` },
      ...(signal ? { signal } : {}),
    });
  }
}
