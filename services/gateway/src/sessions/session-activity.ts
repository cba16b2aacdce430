import { isSessionId } from '@sandbox/contract';
import type { Logger } from '@sandbox/logger';
import type { Invalidations } from '../cache/invalidations';
import { StampedCache } from '../cache/stamped-cache';
import type { SessionRecord } from './session-record';
import { sessionStamp, type SessionStore } from './session-store';

/** How often a replica writes the activity it has seen, in one statement. */
export const ACTIVITY_FLUSH_MS = 1000;
/**
 * How far from its next transition (idle, expiry) a session must be for its activity to wait
 * for the next flush. Nearer, the request writes it at once, as a sweep may be about to run:
 * more than a flush interval, plus room for clocks that disagree a little.
 */
export const DEFER_MARGIN_MS = 5000;
/** Session records a replica keeps in memory. */
const MAX_CACHED_SESSIONS = 50_000;

/**
 * The activity a request records on its session, without a Postgres round trip when it can
 * wait. A request names a session and must learn its state and node; this replica keeps the
 * record it last read while the session's stamp is unchanged (one Redis round trip tells).
 * The activity is then written by the next flush, unless the session is near a transition:
 * a cached record that is not active, or whose idle deadline (counted from the activity last
 * written) or expiry is within DEFER_MARGIN_MS, sends the request to the database as before.
 * Since activity waits at most ACTIVITY_FLUSH_MS, no sweep can see a session idle that had a
 * request in time.
 */
export class SessionActivity {
  private readonly cache: StampedCache<SessionRecord>;
  /** Activity seen and not yet written: when it was last seen, per session. */
  private pending = new Map<string, Date>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: SessionStore,
    invalidations: Invalidations,
    private readonly idleAfterMs: number,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.cache = new StampedCache(invalidations, MAX_CACHED_SESSIONS, now);
    this.timer = setInterval(() => void this.flush(), ACTIVITY_FLUSH_MS);
    this.timer.unref();
  }

  /** The caller's live session (else 404), with this request recorded as its activity. */
  async touch(accountId: string, sessionId: string): Promise<SessionRecord> {
    // What cannot be a session id is refused by the store, without a stamp to read.
    if (!isSessionId(sessionId)) return this.store.touch(accountId, sessionId);
    const read = await this.cache.readStamps([sessionStamp(sessionId)]);
    const cached = this.cache.lookup(sessionId, read);
    if (cached !== undefined && cached.accountId === accountId && this.mayWait(cached)) {
      this.pending.set(sessionId, new Date(this.now()));
      return cached;
    }
    const session = await this.store.touch(accountId, sessionId);
    this.cache.keep(sessionId, session, read);
    return session;
  }

  /**
   * Activity on a session that a request opened before (a run or a download that ended):
   * under the same rule as `touch`, it waits for the next flush when the record this replica
   * last read is far from its transitions, else it is written at once. A record changed since
   * (stamps not read: no round trip) can only be older in `lastActiveAt`, so it errs towards
   * writing.
   */
  seen(sessionId: string): void {
    const cached = this.cache.peek(sessionId);
    if (cached !== undefined && this.mayWait(cached)) {
      this.pending.set(sessionId, new Date(this.now()));
      return;
    }
    this.store.keepActive(sessionId).catch((err: unknown) => {
      this.logger.warn({ err, sessionId }, 'could not record session activity');
    });
  }

  /** Writes the activity seen so far; runs every ACTIVITY_FLUSH_MS and on stop. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.pending.size === 0) return;
      const batch = this.pending;
      this.pending = new Map();
      try {
        await this.store.recordActivity(batch);
      } catch (err) {
        // Kept for the next flush (newer activity of a session wins).
        for (const [id, at] of batch) if (!this.pending.has(id)) this.pending.set(id, at);
        this.logger.warn({ err, sessions: batch.size }, 'could not record session activity');
      }
    });
    return this.flushing;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  private mayWait(session: SessionRecord): boolean {
    const now = this.now();
    return (
      session.state === 'active' &&
      session.expiresAt.getTime() - now > DEFER_MARGIN_MS &&
      session.lastActiveAt.getTime() + this.idleAfterMs - now > DEFER_MARGIN_MS
    );
  }
}
