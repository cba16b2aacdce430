import type { AccountFixture } from './use-stack';

/** A cell's answer, as POST /v1/execute gives it for a context (ADR 42). */
export interface Cell {
  stdout: string;
  stderr: string;
  exitCode: number;
  timedOut: boolean;
  results?: Array<Record<string, unknown>>;
  error?: { name: string; message: string; stack: string };
}

export interface Context {
  contextId: string;
  language: string;
  cwd: string;
  createdAt: string;
}

/** The cell's main result as plain text. */
export const mainText = (run: { body: Cell }) =>
  run.body.results?.find((result) => result.isMain === true)?.['text/plain'];

/**
 * Calls on the contexts of the fixture's session: their path, a new context, a cell, and one
 * context that cases building on each other share (made once, when first asked for).
 */
export function contextCalls(t: AccountFixture) {
  const contextsPath = () => `/v1/sessions/${t.sessionId}/contexts`;
  const newContext = async (body: Record<string, unknown> = {}): Promise<string> => {
    const created = await t.api.post<Context>(contextsPath(), body);
    expect(created.status).toBe(201);
    return created.body.contextId;
  };
  let shared: Promise<string> | undefined;
  return {
    contextsPath,
    newContext,
    cell: (contextId: string, code: string, extra: Record<string, unknown> = {}) =>
      t.api.execute<Cell>(t.sessionId, { contextId, code, ...extra }),
    sharedContext: () => (shared ??= newContext()),
  };
}
