import { SandboxError } from './errors.js';
import { HttpClient, newIdempotencyKey, resolveOptions, type ClientOptions } from './http.js';
import type { Snapshot, SnapshotPage } from './types.js';

type CallOptions = { signal?: AbortSignal };

/**
 * The account's snapshots (ADR 44): `sandbox.snapshot()` takes one, `Sandbox.create({
 * snapshotId })` starts a session from one; here they are listed, read and deleted.
 */
export class Snapshots {
  private readonly http: HttpClient;

  constructor(options: ClientOptions = {}) {
    this.http = new HttpClient(resolveOptions(options));
  }

  /** One page, newest first (`limit` default 50, at most 100). */
  list(options: CallOptions & { limit?: number; offset?: number } = {}): Promise<SnapshotPage> {
    const { limit, offset, signal } = options;
    return this.http.json<SnapshotPage>({
      method: 'GET',
      path: '/snapshots',
      query: { limit, offset },
      signal,
      retry: 'safe',
    });
  }

  /** One snapshot; throws SnapshotNotFoundError. */
  get(snapshotId: string, options: CallOptions = {}): Promise<Snapshot> {
    return this.http.json<Snapshot>({
      method: 'GET',
      path: `/snapshots/${encodeURIComponent(snapshotId)}`,
      signal: options.signal,
      retry: 'safe',
    });
  }

  /** Deletes a snapshot and its stored files; one already gone is no error. */
  async delete(snapshotId: string, options: CallOptions = {}): Promise<void> {
    try {
      await this.http.send({
        method: 'DELETE',
        path: `/snapshots/${encodeURIComponent(snapshotId)}`,
        signal: options.signal,
        retry: 'safe',
      });
    } catch (err) {
      // A retry after a lost answer finds it deleted: what was asked is done.
      if (!(err instanceof SandboxError && err.code === 'snapshot_not_found')) throw err;
    }
  }
}

/** What `sandbox.snapshot()` takes (ADR 44). */
export interface SnapshotOptions {
  name?: string;
  /** Keep the processes too where the service can; the answer's `processesKept` says. */
  processes?: boolean;
  signal?: AbortSignal;
}

/** `POST /sessions/{id}/snapshots`: the session's files stored as a snapshot. */
export function takeSnapshot(
  http: HttpClient,
  sessionId: string,
  options: SnapshotOptions,
): Promise<Snapshot> {
  const { signal, ...body } = options;
  return http.json<Snapshot>({
    method: 'POST',
    path: `/sessions/${encodeURIComponent(sessionId)}/snapshots`,
    json: body,
    headers: { 'idempotency-key': newIdempotencyKey() },
    signal,
    retry: 'safe',
  });
}
