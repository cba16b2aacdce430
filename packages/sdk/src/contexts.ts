import type { HttpClient } from './http.js';
import { SessionCollection } from './session-collection.js';
import type { CodeContext, CreateContextBody } from './types.js';

export interface ContextCallOptions {
  signal?: AbortSignal;
}

/**
 * A session's contexts: each a long-lived JavaScript/TypeScript process whose variables,
 * functions and imports stay from one cell to the next (`sandbox.runCode(code, { context })`),
 * or a shell context (`language: 'bash'`), one bash whose directory, variables and functions
 * stay from one command to the next (`sandbox.runCommand(command, { context })`). A session
 * holds 8 at the most.
 */
export class Contexts extends SessionCollection {
  /** @internal Made by `Sandbox`; use `sandbox.contexts`. */
  constructor(http: HttpClient, sessionId: string) {
    super(http, sessionId, 'contexts');
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
    return (await this.read<{ contexts: CodeContext[] }>(this.path(), options)).contexts;
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
