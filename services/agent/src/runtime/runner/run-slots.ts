import { AppError } from '@sandbox/errors';

/**
 * How many runs each session has under way on this node, against a limit: a session's runs
 * share its CPU, memory and 256 processes, and past a few dozen at once none of them would
 * finish in its time. A session always lives on one node, so this count is the whole of it.
 */
export class RunSlots {
  private readonly running = new Map<string, number>();

  constructor(private readonly limit: number) {}

  /** Runs `work` in one of the session's slots; 429 `rate_limit_exceeded` when none is free. */
  async within<T>(sessionId: string, work: () => Promise<T>): Promise<T> {
    const count = this.running.get(sessionId) ?? 0;
    if (count >= this.limit) {
      throw new AppError(
        'rate_limit_exceeded',
        `This session already has ${this.limit} runs under way; retry when one has ended`,
        { details: { limit: this.limit, scope: 'session_runs' }, retryAfter: 1 },
      );
    }
    this.running.set(sessionId, count + 1);
    try {
      return await work();
    } finally {
      const left = (this.running.get(sessionId) ?? 1) - 1;
      if (left === 0) this.running.delete(sessionId);
      else this.running.set(sessionId, left);
    }
  }
}
