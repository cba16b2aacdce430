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
