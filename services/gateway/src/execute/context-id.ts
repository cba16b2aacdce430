import { AppError } from '@sandbox/errors';

/** Code context ids (ADR 42): `ctx_` + 24 lowercase hex digits, made by the sandbox's runner. */
export const CONTEXT_ID_PATTERN = /^ctx_[0-9a-f]{24}$/;

export function isContextId(value: unknown): value is string {
  return typeof value === 'string' && CONTEXT_ID_PATTERN.test(value);
}

/**
 * A context id from a request: one that cannot exist is 404 context_not_found, as an unknown
 * one is (nothing tells a malformed id from another session's).
 */
export function checkContextId(value: string): string {
  if (!isContextId(value)) {
    throw new AppError('context_not_found', 'No such context in this session', {
      details: { contextId: value },
    });
  }
  return value;
}
