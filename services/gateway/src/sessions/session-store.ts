import type { EgressPolicy } from '@sandbox/contract';
import { LocalInvalidations, type Invalidations } from '../cache/invalidations';
import type { Database } from '../db/database';
import { newestFirstPage, type Page, type PageWindow } from '../db/newest-first-page';
import { oneRow } from '../db/one-row';
import {
  CLAIM_EVACUATIONS_SQL,
  CLAIM_PENDING_DESTROYS_SQL,
  EXPIRE_DUE_SQL,
  FORGET_LOST_NODE_SQL,
  MARK_DEEP_SLEEP_DUE_SQL,
  MARK_IDLE_DUE_SQL,
  MS_UNTIL_NEXT_TRANSITION_SQL,
} from './session-batch-sql';
import { insertSession, insertSessions } from './insert-session';
import { notFoundError, requireSessionId, sessionNotFound } from './session-not-found';
import {
  COLUMNS,
  LIVE,
  SAVED_IN,
  toRecord,
  type NewSession,
  type PendingDestroy,
  type SessionRecord,
  type SessionRow,
  type SessionState,
} from './session-record';

/** The stamp bumped by each change of a session's row that a cached record would miss. */
export const sessionStamp = (sessionId: string): string => `session:${sessionId}`;

/**
 * Sessions in Postgres. Every read is scoped to the caller's account. Each change of state
 * (ended, idle, asleep, awake) bumps the session's stamp, so that no replica goes on using a
 * record it cached before (see SessionActivity).
 */
export class SessionStore {
  constructor(
    private readonly db: Database,
    private readonly invalidations: Invalidations = new LocalInvalidations(),
  ) {}

  /**
   * Tells every replica that these sessions changed. Best effort: with Redis out of reach no
   * replica uses its cache (it cannot read the stamps), and a cached record is dropped after
   * MAX_CACHED_MS whatever happens.
   */
  private async changed(sessionIds: readonly string[]): Promise<void> {
    await this.invalidations.bump(sessionIds.map(sessionStamp)).catch(() => undefined);
  }

  /** Inserts a session in state `creating`, within the account's concurrent-session limit. */
  insert(session: NewSession): Promise<SessionRecord> {
    return insertSession(this.db, session);
  }

  /** Inserts all of `sessions` or none (a fork's), within the limit. */
  insertAll(sessions: readonly NewSession[]): Promise<SessionRecord[]> {
    return insertSessions(this.db, sessions);
  }

  /** Replaces the caller's live session's egress policy (null: allow-all); 404 if none. */
  async setEgress(
    accountId: string,
    sessionId: string,
    egress: EgressPolicy | null,
  ): Promise<SessionRecord> {
    requireSessionId(sessionId);
    const row = await oneRow<SessionRow>(
      this.db,
      `UPDATE sessions SET egress = $3 WHERE id = $2 AND account_id = $1 AND ${LIVE}
       RETURNING ${COLUMNS}`,
      [accountId, sessionId, egress],
      () => sessionNotFound(sessionId),
    );
    await this.changed([sessionId]);
    return toRecord(row);
  }

  async markActive(sessionId: string): Promise<void> {
    // The create is the session's first request: its delays count from its end.
    await this.db.query(
      `UPDATE sessions SET state = 'active', last_active_at = now() WHERE id = $1`,
      [sessionId],
    );
  }

  /** The caller's live session, or 404 session_not_found. */
  async get(accountId: string, sessionId: string): Promise<SessionRecord> {
    requireSessionId(sessionId);
    const row = await oneRow<SessionRow>(
      this.db,
      `SELECT ${COLUMNS} FROM sessions WHERE id = $1 AND account_id = $2 AND ${LIVE}`,
      [sessionId, accountId],
      () => notFoundError(this.db, sessionId, accountId),
    );
    return toRecord(row);
  }

  /**
   * Ends the sessions of a node lost for good that cannot wake elsewhere (all but confirmed
   * sleepers in a shared store), with a `session.lost` event each, and removes the node from
   * the registry, in one transaction. Their sandboxes' removal stays pending: a node that
   * comes back after all is cleaned up by the sweeper.
   */
  async forgetLostNode(nodeId: string): Promise<string[]> {
    return this.db
      .transaction(async (tx) => {
        const { rows } = await tx.query<{ id: string }>(FORGET_LOST_NODE_SQL, [nodeId]);
        await tx.query('DELETE FROM nodes WHERE id = $1', [nodeId]);
        return rows.map((row) => row.id);
      })
      .then(async (ids) => {
        await this.changed(ids);
        return ids;
      });
  }

  /** Like `get`, and records the request as activity. */
  async touch(accountId: string, sessionId: string): Promise<SessionRecord> {
    requireSessionId(sessionId);
    const row = await oneRow<SessionRow>(
      this.db,
      `UPDATE sessions SET last_active_at = now()
        WHERE id = $1 AND account_id = $2 AND ${LIVE}
        RETURNING ${COLUMNS}`,
      [sessionId, accountId],
      () => notFoundError(this.db, sessionId, accountId),
    );
    return toRecord(row);
  }

  /**
   * Records activity seen at the given times (a replica's batch): a session's activity only
   * moves forward, and never past the database's clock.
   */
  async recordActivity(activity: ReadonlyMap<string, Date>): Promise<void> {
    if (activity.size === 0) return;
    await this.db.query(
      `UPDATE sessions s SET last_active_at = GREATEST(s.last_active_at, LEAST(a.at, now()))
         FROM unnest($1::text[], $2::timestamptz[]) AS a(id, at)
        WHERE s.id = a.id AND ${LIVE}`,
      [[...activity.keys()], [...activity.values()]],
    );
  }

  /** Records activity on a session a request is still using (a long run). */
  async keepActive(sessionId: string): Promise<void> {
    await this.db.query(`UPDATE sessions SET last_active_at = now() WHERE id = $1 AND ${LIVE}`, [
      sessionId,
    ]);
  }

  /** Any account's live session by id, recorded as activity (preview traffic). */
  /**
   * For preview traffic, before anything counts as activity: whether the live session exists,
   * and the hash of its preview token when its preview is private.
   */
  async previewAccess(sessionId: string): Promise<{ tokenHash: Buffer | null }> {
    requireSessionId(sessionId);
    const row = await oneRow<{ preview_token_hash: Buffer | null }>(
      this.db,
      `SELECT preview_token_hash FROM sessions WHERE id = $1 AND ${LIVE}`,
      [sessionId],
      () => sessionNotFound(sessionId),
    );
    return { tokenHash: row.preview_token_hash };
  }

  async touchById(sessionId: string): Promise<SessionRecord> {
    requireSessionId(sessionId);
    const row = await oneRow<SessionRow>(
      this.db,
      `UPDATE sessions SET last_active_at = now() WHERE id = $1 AND ${LIVE} RETURNING ${COLUMNS}`,
      [sessionId],
      () => sessionNotFound(sessionId),
    );
    return toRecord(row);
  }

  /** One page of the account's live sessions, newest first. */
  list(window: PageWindow): Promise<Page<SessionRecord>> {
    return newestFirstPage(
      this.db,
      { select: COLUMNS, from: 'sessions', where: LIVE },
      window,
      toRecord,
    );
  }

  /** Ends a live session for the API at once; returns its node, or 404. */
  async markDeleted(accountId: string, sessionId: string): Promise<PendingDestroy> {
    requireSessionId(sessionId);
    const row = await oneRow<{ id: string; node_id: string; saved_in: string | null }>(
      this.db,
      `UPDATE sessions SET deleted_at = now()
        WHERE id = $1 AND account_id = $2 AND ${LIVE}
        RETURNING id, node_id, ${SAVED_IN}`,
      [sessionId, accountId],
      () => notFoundError(this.db, sessionId, accountId),
    );
    await this.changed([row.id]);
    return { id: row.id, nodeId: row.node_id, savedIn: row.saved_in };
  }

  /** Gives up a session whose creation failed; the sweeper removes whatever the node left. */
  async abandon(sessionId: string): Promise<void> {
    await this.db.query(
      'UPDATE sessions SET deleted_at = COALESCE(deleted_at, now()) WHERE id = $1',
      [sessionId],
    );
    await this.changed([sessionId]);
  }

  async markDestroyed(sessionId: string): Promise<void> {
    await this.db.query(
      'UPDATE sessions SET destroyed_at = now(), destroy_lease_until = NULL WHERE id = $1',
      [sessionId],
    );
  }

  /**
   * Ends sessions past their TTL, and sessions stuck in `creating` (a gateway died mid-create).
   * Safe on every replica at once: each row is claimed by one of them.
   */
  async expireDue(stuckCreatingAfterS: number, batch = 100): Promise<string[]> {
    // The session.expired events are recorded in the same statement: none is lost or doubled.
    const { rows } = await this.db.query<{ id: string }>(EXPIRE_DUE_SQL, [
      stuckCreatingAfterS,
      batch,
    ]);
    const ids = rows.map((row) => row.id);
    await this.changed(ids);
    return ids;
  }

  /**
   * Marks sessions without a request for `idleS` as idle, before their sandbox is paused (a
   * request from then on wakes it). Returns what the caller must pause.
   */
  async markIdleDue(idleS: number, batch = 20): Promise<PendingDestroy[]> {
    const { rows } = await this.db.query<{ id: string; node_id: string }>(MARK_IDLE_DUE_SQL, [
      idleS,
      batch,
    ]);
    await this.changed(rows.map((row) => row.id));
    return rows.map((row) => ({ id: row.id, nodeId: row.node_id }));
  }

  /**
   * Marks sessions without a request for `deepS` as in deep sleep (before their workspace is
   * saved), and claims again those whose sleep the node has not confirmed, under a lease.
   */
  async markDeepSleepDue(deepS: number, leaseS: number, batch = 10): Promise<PendingDestroy[]> {
    const { rows } = await this.db.query<{ id: string; node_id: string }>(MARK_DEEP_SLEEP_DUE_SQL, [
      deepS,
      leaseS,
      batch,
    ]);
    await this.changed(rows.map((row) => row.id));
    return rows.map((row) => ({ id: row.id, nodeId: row.node_id }));
  }

  /** The node saved the workspace (in `savedIn`) and removed the sandbox. */
  async confirmSleep(sessionId: string, filesCount: number, savedIn: string): Promise<void> {
    await this.db.query(
      `UPDATE sessions SET sleep_confirmed_at = now(), sleep_files_count = $2, saved_in = $3,
              lifecycle_lease_until = NULL
        WHERE id = $1 AND state = 'deep-sleep'`,
      [sessionId, filesCount, savedIn],
    );
    await this.changed([sessionId]);
  }

  /**
   * Claims, under a lease, sessions a draining node must still move (all but confirmed
   * sleepers in a shared store), marked as in deep sleep: a request from then on waits for the
   * move (503 with Retry-After) and then wakes on another node.
   */
  async claimEvacuations(nodeId: string, leaseS: number, batch = 5): Promise<string[]> {
    const { rows } = await this.db.query<{ id: string }>(CLAIM_EVACUATIONS_SQL, [
      nodeId,
      leaseS,
      batch,
    ]);
    await this.changed(rows.map((row) => row.id));
    return rows.map((row) => row.id);
  }

  /** Live sessions by state (for the metrics). */
  async countByState(): Promise<Record<string, number>> {
    const { rows } = await this.db.query<{ state: string; count: string }>(
      `SELECT state, count(*) AS count FROM sessions
        WHERE deleted_at IS NULL AND expires_at > now() GROUP BY state`,
    );
    return Object.fromEntries(rows.map((row) => [row.state, Number(row.count)]));
  }

  /** A failed evacuation is tried again after `retryS` (its lease ends then). */
  async retryEvacuationIn(sessionId: string, retryS: number): Promise<void> {
    await this.db.query(
      `UPDATE sessions SET lifecycle_lease_until = now() + make_interval(secs => $2)
        WHERE id = $1 AND state = 'deep-sleep' AND sleep_confirmed_at IS NULL`,
      [sessionId, retryS],
    );
  }

  /**
   * Moves a confirmed sleeper to the node it is about to wake on; false when another request
   * moved or woke it first.
   */
  async moveTo(sessionId: string, fromNodeId: string, toNodeId: string): Promise<boolean> {
    const { rowCount } = await this.db.query(
      `UPDATE sessions SET node_id = $3
        WHERE id = $1 AND node_id = $2 AND state = 'deep-sleep' AND sleep_confirmed_at IS NOT NULL`,
      [sessionId, fromNodeId, toNodeId],
    );
    await this.changed([sessionId]);
    return rowCount === 1;
  }

  /**
   * Back to active after a wake from `from`, or after the node refused to leave `from`'s
   * transition because the session is in use. Either counts as activity: its idle delay
   * starts again now, not at the request that woke it (a wake can outlast the delay).
   */
  async markAwake(sessionId: string, from: SessionState): Promise<void> {
    await this.db.query(
      `UPDATE sessions SET state = 'active', sleep_confirmed_at = NULL, sleep_files_count = NULL,
              saved_in = NULL, lifecycle_lease_until = NULL,
              last_active_at = GREATEST(last_active_at, now())
        WHERE id = $1 AND state = $2`,
      [sessionId, from],
    );
    await this.changed([sessionId]);
  }

  /**
   * Milliseconds (by the database's clock) until the next session expires, goes idle after
   * `idleS` or to deep sleep after `deepS`; null when no session is due ever. Each minimum is
   * one probe of an index (sessions_expiry, sessions_lifecycle), not a scan of the sessions.
   */
  async msUntilNextTransition(idleS: number, deepS: number): Promise<number | null> {
    const { rows } = await this.db.query<{ ms: number | null }>(MS_UNTIL_NEXT_TRANSITION_SQL, [
      idleS,
      deepS,
    ]);
    return rows[0]?.ms ?? null;
  }

  /** Claims ended sessions whose sandbox is not yet removed, under a lease of `leaseS`. */
  async claimPendingDestroys(leaseS: number, batch = 20): Promise<PendingDestroy[]> {
    const { rows } = await this.db.query<{ id: string; node_id: string; saved_in: string | null }>(
      CLAIM_PENDING_DESTROYS_SQL,
      [leaseS, batch],
    );
    return rows.map((row) => ({ id: row.id, nodeId: row.node_id, savedIn: row.saved_in }));
  }
}
