// Only this module can hand out or release a lock: these keys are not exported.
const issue = Symbol('issue');
const release = Symbol('release');

/**
 * Proof that the caller holds one session's lock. Operations that must run under the lock take
 * it as a parameter; only `SessionLocks.withLock` makes one, so they cannot be called without it.
 */
export class SessionLock {
  #held = true;

  private constructor(readonly sessionId: string) {}

  static [issue](sessionId: string): SessionLock {
    return new SessionLock(sessionId);
  }

  static [release](lock: SessionLock): void {
    lock.#held = false;
  }

  /** Throws unless this is the held lock of `sessionId`: a programming error, never a user's. */
  check(sessionId: string): void {
    if (!this.#held || sessionId !== this.sessionId) {
      throw new Error(`the lock of ${this.sessionId} does not cover ${sessionId} now`);
    }
  }
}

/** Lifecycle transitions of one session never overlap; those of different sessions do. */
export class SessionLocks {
  private readonly tails = new Map<string, Promise<unknown>>();

  /** Runs `work` once every earlier transition of the session has settled. */
  withLock<T>(sessionId: string, work: (lock: SessionLock) => Promise<T>): Promise<T> {
    const locked = async () => {
      const lock = SessionLock[issue](sessionId);
      try {
        return await work(lock);
      } finally {
        SessionLock[release](lock);
      }
    };
    const previous = this.tails.get(sessionId) ?? Promise.resolve();
    const next = previous.then(locked, locked);
    const settled = next.catch(() => undefined);
    this.tails.set(sessionId, settled);
    void settled.then(() => {
      if (this.tails.get(sessionId) === settled) this.tails.delete(sessionId);
    });
    return next;
  }
}
