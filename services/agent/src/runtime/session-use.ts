/** One session's use, as the node sees it. */
interface Use {
  inFlight: number;
  /** Bumped by each request that starts. */
  started: number;
  /** When the last request ended (performance.now()). */
  endedAt: number;
}

/** A point in a session's use, to ask later whether it was used since. */
export interface UseMark {
  readonly sessionId: string;
  readonly started: number;
}

/**
 * Which sessions the node serves a request of now, and when it last served one. Every request
 * of a session goes through its node, so the node knows better than any gateway replica's
 * activity record whether a session is in use: a pause or a deep sleep asks it last (issue 17).
 */
export class SessionUse {
  private readonly uses = new Map<string, Use>();

  /** Runs `work` as a request of the session. */
  async track<T>(sessionId: string, work: () => Promise<T>): Promise<T> {
    const use = this.uses.get(sessionId) ?? { inFlight: 0, started: 0, endedAt: 0 };
    this.uses.set(sessionId, use);
    use.inFlight += 1;
    use.started += 1;
    try {
      return await work();
    } finally {
      use.inFlight -= 1;
      use.endedAt = performance.now();
    }
  }

  /** Whether a request of the session runs now or ended less than `ms` ago. */
  usedWithin(sessionId: string, ms: number): boolean {
    const use = this.uses.get(sessionId);
    if (use === undefined) return false;
    return use.inFlight > 0 || performance.now() - use.endedAt < ms;
  }

  mark(sessionId: string): UseMark {
    return { sessionId, started: this.uses.get(sessionId)?.started ?? 0 };
  }

  /** Whether a request of the session started since `mark` or runs now. */
  usedSince(mark: UseMark): boolean {
    const use = this.uses.get(mark.sessionId);
    return use !== undefined && (use.inFlight > 0 || use.started !== mark.started);
  }

  /** Forgets a session the node no longer has (removed, or saved and removed). */
  forget(sessionId: string): void {
    const use = this.uses.get(sessionId);
    if (use !== undefined && use.inFlight === 0) this.uses.delete(sessionId);
  }
}
