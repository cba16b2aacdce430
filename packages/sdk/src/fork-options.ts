import { newIdempotencyKey, type HttpClient } from './http.js';
import type { ForkBody, ForkResult } from './types.js';

/** What `sandbox.fork()` takes (ADR 43). */
export interface ForkOptions {
  /** How many forks, 1…10 (default 1). */
  count?: number;
  /**
   * Keep the source's running processes where the service can (default true); the answer's
   * `processesKept` says whether it did (files are always kept).
   */
  processes?: boolean;
  /** Makes retries of this fork return the same forks (24 h); one is made when none is given. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

/** `POST /sessions/{id}/fork`: the new sessions, all or none. */
export function requestForks(
  http: HttpClient,
  sessionId: string,
  options: ForkOptions,
): Promise<ForkResult> {
  const { count, processes, idempotencyKey, signal } = options;
  return http.json<ForkResult>({
    method: 'POST',
    path: `/sessions/${encodeURIComponent(sessionId)}/fork`,
    json: { count, processes } satisfies ForkBody,
    headers: { 'idempotency-key': idempotencyKey ?? newIdempotencyKey() },
    signal,
    retry: 'safe',
  });
}
