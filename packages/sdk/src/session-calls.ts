import { SandboxError } from './errors.js';
import type { HttpClient } from './http.js';
import type { SessionInfo, SessionPage } from './types.js';

/* The calls on sessions that `Sandbox`'s statics and instances share. */

export function getInfo(
  http: HttpClient,
  sessionId: string,
  signal: AbortSignal | undefined,
): Promise<SessionInfo> {
  return http.json<SessionInfo>({
    method: 'GET',
    path: `/sessions/${encodeURIComponent(sessionId)}`,
    signal,
    retry: 'safe',
  });
}

export function listPage(
  http: HttpClient,
  limit: number | undefined,
  offset: number | undefined,
  signal: AbortSignal | undefined,
): Promise<SessionPage> {
  return http.json<SessionPage>({
    method: 'GET',
    path: '/sessions',
    query: { limit, offset },
    signal,
    retry: 'safe',
  });
}

export async function deleteSession(
  http: HttpClient,
  sessionId: string,
  signal: AbortSignal | undefined,
): Promise<void> {
  try {
    await http.send({
      method: 'DELETE',
      path: `/sessions/${encodeURIComponent(sessionId)}`,
      signal,
      retry: 'safe',
    });
  } catch (err) {
    // A retry after a lost answer finds it deleted: what was asked is done.
    if (!(err instanceof SandboxError && err.code === 'session_not_found')) throw err;
  }
}
