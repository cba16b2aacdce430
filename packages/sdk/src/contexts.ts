import type { HttpClient } from './http.js';
import type { CodeContext, CreateContextBody } from './types.js';

export interface ContextCallOptions {
  signal?: AbortSignal;
}

/**
 * A session's code contexts: each a long-lived JavaScript/TypeScript process whose variables,
 * functions and imports stay from one cell to the next (`sandbox.runCode(code, { context })`).
 * A session holds 8 at the most.
 */
export class Contexts {
  /** @internal Made by `Sandbox`; use `sandbox.contexts`. */
  constructor(
    private readonly http: HttpClient,
    private readonly sessionId: string,
  ) {}

  private path(contextId?: string, rest = ''): string {
    const base = `/sessions/${encodeURIComponent(this.sessionId)}/contexts`;
    return contextId === undefined ? base : `${base}/${encodeURIComponent(contextId)}${rest}`;
  }

  /** A new context (TypeScript in /workspace unless told), ready for cells. */
  create(body: CreateContextBody = {}, options: ContextCallOptions = {}): Promise<CodeContext> {
    return this.http.json<CodeContext>({
      method: 'POST',
      path: this.path(),
      json: body,
      signal: options.signal,
      retry: 'refused',
    });
  }

  async list(options: ContextCallOptions = {}): Promise<CodeContext[]> {
    const listed = await this.http.json<{ contexts: CodeContext[] }>({
      method: 'GET',
      path: this.path(),
      signal: options.signal,
      retry: 'safe',
    });
    return listed.contexts;
  }

  /** Deletes a context: its process ends. Throws ContextNotFoundError for an unknown one. */
  async delete(contextId: string, options: ContextCallOptions = {}): Promise<void> {
    await this.http.json({
      method: 'DELETE',
      path: this.path(contextId),
      signal: options.signal,
      retry: 'refused',
    });
  }

  /** A fresh process under the same id: the context's variables are gone. */
  restart(contextId: string, options: ContextCallOptions = {}): Promise<CodeContext> {
    return this.http.json<CodeContext>({
      method: 'POST',
      path: this.path(contextId, '/restart'),
      signal: options.signal,
      retry: 'refused',
    });
  }
}
