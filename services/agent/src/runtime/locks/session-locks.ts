import { KeyedQueue } from './keyed-queue';

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

/** Hands over work that still needs the session's lock after the caller has been answered. */
export type Later = (task: () => Promise<void>) => void;

/** Lifecycle transitions of one session never overlap; those of different sessions do. */
export class SessionLocks {
  private readonly queue = new KeyedQueue();
  /** Per session, how many answered callers' handed-over tasks are still to run. */
  private readonly unfinished = new Map<string, number>();

  /**
   * Whether work handed over after an answer (`withLockAnsweringFirst`) is still to run: the
   * session's sandbox may exist without being ready (its egress policy not applied yet), so
   * a request waits for the lock rather than use it.
   */
  finishing(sessionId: string): boolean {
    return this.unfinished.has(sessionId);
  }

  private count(sessionId: string, by: number): void {
    const left = (this.unfinished.get(sessionId) ?? 0) + by;
    if (left > 0) this.unfinished.set(sessionId, left);
    else this.unfinished.delete(sessionId);
  }

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
    return this.queue.run(sessionId, locked);
  }

  /**
   * As `withLock`, but `work` may hand over tasks (`later`) that run under the same lock once
   * the caller has its answer: the session's next transition waits for them, the caller does
   * not. A task reports its own failures (a rejection is dropped).
   */
  withLockAnsweringFirst<T>(
    sessionId: string,
    work: (lock: SessionLock, later: Later) => Promise<T>,
  ): Promise<T> {
    return new Promise<T>((answer, fail) => {
      const locked = async (lock: SessionLock) => {
        const tasks: (() => Promise<void>)[] = [];
        const later: Later = (task) => {
          // Counted before the caller has its answer: its next request sees it.
          if (tasks.length === 0) this.count(sessionId, 1);
          tasks.push(task);
        };
        try {
          answer(await work(lock, later));
        } catch (err) {
          fail(err instanceof Error ? err : new Error(String(err)));
        }
        try {
          for (const task of tasks) await task().catch(() => undefined);
        } finally {
          if (tasks.length > 0) this.count(sessionId, -1);
        }
      };
      void this.withLock(sessionId, locked);
    });
  }
}
