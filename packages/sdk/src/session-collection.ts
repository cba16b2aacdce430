import type { HttpClient } from './http.js';

/**
 * @internal What a collection of a session's (`/sessions/{id}/<name>`: its processes, its
 * contexts) shares: the paths of its members and its plain reads.
 */
export abstract class SessionCollection {
  protected constructor(
    protected readonly http: HttpClient,
    protected readonly sessionId: string,
    private readonly name: string,
  ) {}

  /** The collection's path, or one member's (`id`) with `rest` after it. */
  protected path(id?: string | number, rest = ''): string {
    const base = `/sessions/${encodeURIComponent(this.sessionId)}/${this.name}`;
    return id === undefined ? base : `${base}/${encodeURIComponent(String(id))}${rest}`;
  }

  /** A GET of `path` (retried: reads are safe to send again). */
  protected read<T>(path: string, options: { signal?: AbortSignal }): Promise<T> {
    return this.http.json<T>({ method: 'GET', path, signal: options.signal, retry: 'safe' });
  }
}
