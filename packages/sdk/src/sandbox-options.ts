import type { ClientOptions } from './http.js';
import type { CreateSessionBody } from './types.js';

export interface CreateOptions extends ClientOptions, Omit<CreateSessionBody, 'ttl'> {
  /**
   * How long the session lives, in milliseconds (rounded up to whole seconds): default 24 h,
   * at most the plan's (free 24 h, paid 7 days).
   */
  ttlMs?: number;
  /** @deprecated Seconds: use `ttlMs`. */
  ttl?: number;
  /**
   * Makes retries of this create return the same session (24 h). One is made for every
   * create when none is given, so that a retry after a lost answer never makes two sessions.
   */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

export interface ConnectOptions extends ClientOptions {
  /**
   * The X-Preview-Token of a private preview; default: the one the session's info shows
   * (needed only for sessions made before the service kept it).
   */
  previewToken?: string;
  signal?: AbortSignal;
}

/** Which page of the account's sessions `Sandbox.list` starts at, and how large pages are. */
export interface ListOptions extends ClientOptions {
  /** Sessions a page, 1…100 (default: 50 for one page, 100 when iterating). */
  limit?: number;
  offset?: number;
  signal?: AbortSignal;
}
