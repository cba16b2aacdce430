import { AppError } from '@sandbox/errors';
import { LocalInvalidations, type Invalidations } from '../cache/invalidations';
import type { Database } from '../db/database';
import { enqueueFromSql, isoSql, NEW_EVENT_ID_SQL } from '../webhooks/events';
import { isSessionId, type EgressPolicy } from '@sandbox/contract';
import { UNMOVED } from '../nodes/node-store';
import type { SessionResourceLimits } from './session-limits';

export type SessionState = 'creating' | 'active' | 'idle' | 'deep-sleep';

export interface SessionRecord {
  id: string;
  accountId: string;
  nodeId: string;
  state: SessionState;
  metadata: Record<string, unknown>;
  resourceLimits: SessionResourceLimits;
  createdAt: Date;
  expiresAt: Date;
  lastActiveAt: Date;
  /** Files saved when the session went to deep sleep. */
  sleepFilesCount: number | null;
  /** Its preview needs the X-Preview-Token given at creation. */
  previewPrivate: boolean;
  /** In deep sleep: where its workspace was saved (a blob store's id, or its node's own). */
  savedIn: string | null;
  /** In deep sleep: the node confirmed the workspace saved and the sandbox removed. */
  sleepConfirmed: boolean;
  /** Where its sandbox may connect; null: allow-all. */
  egress: EgressPolicy | null;
}

interface SessionRow {
  id: string;
  account_id: string;
  node_id: string;
  state: SessionState;
  metadata: Record<string, unknown>;
  resource_limits: SessionResourceLimits;
  created_at: Date;
  expires_at: Date;
  last_active_at: Date;
  sleep_files_count: number | null;
  preview_private: boolean;
  saved_in: string | null;
  sleep_confirmed: boolean;
  egress: EgressPolicy | null;
}

const COLUMNS =
  'id, account_id, node_id, state, metadata, resource_limits, created_at, expires_at, last_active_at, sleep_files_count, (preview_token_hash IS NOT NULL) AS preview_private, saved_in, (sleep_confirmed_at IS NOT NULL) AS sleep_confirmed, egress';

/** A session the API can see: not deleted, not expired, not half-created. */
const LIVE = `deleted_at IS NULL AND expires_at > now() AND state <> 'creating'`;

const toRecord = (row: SessionRow): SessionRecord => ({
  id: row.id,
  accountId: row.account_id,
  nodeId: row.node_id,
  state: row.state,
  metadata: row.metadata,
  resourceLimits: row.resource_limits,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  lastActiveAt: row.last_active_at,
  sleepFilesCount: row.sleep_files_count,
  previewPrivate: row.preview_private,
  savedIn: row.saved_in,
  sleepConfirmed: row.sleep_confirmed,
  egress: row.egress,
});

export function sessionNotFound(sessionId: string): AppError {
  return new AppError('session_not_found', 'Session not found', { details: { sessionId } });
}

/** A string that cannot be a session id names no session: no query needed. */
function requireSessionId(sessionId: string): void {
  if (!isSessionId(sessionId)) throw sessionNotFound(sessionId);
}

export interface NewSession {
  id: string;
  accountId: string;
  nodeId: string;
  metadata: Record<string, unknown>;
  resourceLimits: SessionResourceLimits;
  ttlS: number;
  maxConcurrent: number;
  /** sha256 of the preview token of a private preview. */
  previewTokenHash?: Buffer;
  /** Its egress policy; absent or null: allow-all. */
  egress?: EgressPolicy | null;
}

export interface PendingDestroy {
  id: string;
  nodeId: string;
  /** A confirmed sleeper's store (another node naming a shared one can remove its archive). */
  savedIn?: string | null;
}

const SAVED_IN = 'CASE WHEN sleep_confirmed_at IS NOT NULL THEN saved_in END AS saved_in';

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

  /**
   * Inserts a session in state `creating`, enforcing the account's concurrent-session limit
   * atomically, in one round trip (migration 0008: the account row is locked while counting).
   */
  async insert(session: NewSession): Promise<SessionRecord> {
    const { rows } = await this.db.query<SessionRow>(
      `SELECT ${COLUMNS} FROM insert_session($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        session.id,
        session.accountId,
        session.nodeId,
        session.metadata,
        session.resourceLimits,
        session.ttlS,
        session.previewTokenHash ?? null,
        session.maxConcurrent,
        session.egress ?? null,
      ],
    );
    const row = rows[0];
    if (row === undefined) {
      throw new AppError('session_limit_exceeded', 'Concurrent session limit reached', {
        details: { limit: session.maxConcurrent },
      });
    }
    return toRecord(row);
  }

  /** Replaces the caller's live session's egress policy (null: allow-all); 404 if none. */
  async setEgress(
    accountId: string,
    sessionId: string,
    egress: EgressPolicy | null,
  ): Promise<SessionRecord> {
    requireSessionId(sessionId);
    const { rows } = await this.db.query<SessionRow>(
      `UPDATE sessions SET egress = $3 WHERE id = $2 AND account_id = $1 AND ${LIVE}
       RETURNING ${COLUMNS}`,
      [accountId, sessionId, egress],
    );
    const row = rows[0];
    if (row === undefined) throw sessionNotFound(sessionId);
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
    const { rows } = await this.db.query<SessionRow>(
      `SELECT ${COLUMNS} FROM sessions WHERE id = $1 AND account_id = $2 AND ${LIVE}`,
      [sessionId, accountId],
    );
    const row = rows[0];
    if (row === undefined) throw await this.notFound(sessionId, accountId);
    return toRecord(row);
  }

  /**
   * 404 session_not_found; for a session lost with its node (`forgetLostNode`), saying so
   * (details.reason `node_lost`).
   */
  private async notFound(sessionId: string, accountId: string): Promise<AppError> {
    const { rows } = await this.db.query<{ end_reason: string | null }>(
      'SELECT end_reason FROM sessions WHERE id = $1 AND account_id = $2',
      [sessionId, accountId],
    );
    if (rows[0]?.end_reason === 'node_lost') {
      return new AppError(
        'session_not_found',
        'The session was lost with its node (the node is gone for good); create a new one',
        { details: { sessionId, reason: 'node_lost' } },
      );
    }
    return sessionNotFound(sessionId);
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
        const { rows } = await tx.query<{ id: string }>(
          `WITH lost AS (
           UPDATE sessions s SET deleted_at = now(), end_reason = 'node_lost'
            WHERE s.node_id = $1 AND s.deleted_at IS NULL AND ${UNMOVED}
            RETURNING s.id, s.account_id, s.state, s.created_at, s.metadata),
         events AS (
           ${enqueueFromSql(
             'session.lost',
             `(SELECT account_id, ${NEW_EVENT_ID_SQL} AS event_id,
                      json_build_object('sessionId', id, 'nodeId', $1::text,
                                        'createdAt', ${isoSql('created_at')},
                                        'metadata', metadata) AS data
                 FROM lost WHERE state <> 'creating')`,
           )})
         SELECT id FROM lost`,
          [nodeId],
        );
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
    const { rows } = await this.db.query<SessionRow>(
      `UPDATE sessions SET last_active_at = now()
        WHERE id = $1 AND account_id = $2 AND ${LIVE}
        RETURNING ${COLUMNS}`,
      [sessionId, accountId],
    );
    const row = rows[0];
    if (row === undefined) throw await this.notFound(sessionId, accountId);
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
    const { rows } = await this.db.query<{ preview_token_hash: Buffer | null }>(
      `SELECT preview_token_hash FROM sessions WHERE id = $1 AND ${LIVE}`,
      [sessionId],
    );
    const row = rows[0];
    if (row === undefined) throw sessionNotFound(sessionId);
    return { tokenHash: row.preview_token_hash };
  }

  async touchById(sessionId: string): Promise<SessionRecord> {
    requireSessionId(sessionId);
    const { rows } = await this.db.query<SessionRow>(
      `UPDATE sessions SET last_active_at = now() WHERE id = $1 AND ${LIVE} RETURNING ${COLUMNS}`,
      [sessionId],
    );
    const row = rows[0];
    if (row === undefined) throw sessionNotFound(sessionId);
    return toRecord(row);
  }

  async list(
    accountId: string,
    limit: number,
    offset: number,
  ): Promise<{ sessions: SessionRecord[]; total: number }> {
    const [{ rows }, { rows: counted }] = await Promise.all([
      this.db.query<SessionRow>(
        `SELECT ${COLUMNS} FROM sessions WHERE account_id = $1 AND ${LIVE}
          ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
        [accountId, limit, offset],
      ),
      this.db.query<{ total: string }>(
        `SELECT count(*) AS total FROM sessions WHERE account_id = $1 AND ${LIVE}`,
        [accountId],
      ),
    ]);
    return { sessions: rows.map(toRecord), total: Number(counted[0]?.total ?? 0) };
  }

  /** Ends a live session for the API at once; returns its node, or 404. */
  async markDeleted(accountId: string, sessionId: string): Promise<PendingDestroy> {
    requireSessionId(sessionId);
    const { rows } = await this.db.query<{ id: string; node_id: string; saved_in: string | null }>(
      `UPDATE sessions SET deleted_at = now()
        WHERE id = $1 AND account_id = $2 AND ${LIVE}
        RETURNING id, node_id, ${SAVED_IN}`,
      [sessionId, accountId],
    );
    const row = rows[0];
    if (row === undefined) throw await this.notFound(sessionId, accountId);
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
    const { rows } = await this.db.query<{ id: string }>(
      `WITH expired AS (
         UPDATE sessions SET deleted_at = now()
          WHERE id IN (
            SELECT id FROM sessions
             WHERE deleted_at IS NULL
               AND (expires_at <= now()
                    OR (state = 'creating' AND created_at < now() - make_interval(secs => $1)))
             ORDER BY expires_at
             LIMIT $2
             FOR UPDATE SKIP LOCKED)
          RETURNING id, account_id, state, created_at, expires_at, metadata),
       events AS (
         ${enqueueFromSql(
           'session.expired',
           `(SELECT account_id, ${NEW_EVENT_ID_SQL} AS event_id,
                    json_build_object('sessionId', id, 'createdAt', ${isoSql('created_at')},
                                      'expiresAt', ${isoSql('expires_at')}, 'metadata', metadata) AS data
               FROM expired WHERE state <> 'creating')`,
         )})
       SELECT id FROM expired`,
      [stuckCreatingAfterS, batch],
    );
    const ids = rows.map((row) => row.id);
    await this.changed(ids);
    return ids;
  }

  /**
   * Marks sessions without a request for `idleS` as idle, before their sandbox is paused (a
   * request from then on wakes it). Returns what the caller must pause.
   */
  async markIdleDue(idleS: number, batch = 20): Promise<PendingDestroy[]> {
    const { rows } = await this.db.query<{ id: string; node_id: string }>(
      `UPDATE sessions SET state = 'idle'
        WHERE id IN (
          SELECT id FROM sessions
           WHERE ${LIVE} AND state = 'active'
             AND last_active_at < now() - make_interval(secs => $1)
           ORDER BY last_active_at
           LIMIT $2
           FOR UPDATE SKIP LOCKED)
        RETURNING id, node_id`,
      [idleS, batch],
    );
    await this.changed(rows.map((row) => row.id));
    return rows.map((row) => ({ id: row.id, nodeId: row.node_id }));
  }

  /**
   * Marks sessions without a request for `deepS` as in deep sleep (before their workspace is
   * saved), and claims again those whose sleep the node has not confirmed, under a lease.
   */
  async markDeepSleepDue(deepS: number, leaseS: number, batch = 10): Promise<PendingDestroy[]> {
    const { rows } = await this.db.query<{ id: string; node_id: string }>(
      `UPDATE sessions
          SET state = 'deep-sleep', lifecycle_lease_until = now() + make_interval(secs => $2)
        WHERE id IN (
          SELECT id FROM sessions
           WHERE ${LIVE}
             AND ((state IN ('active', 'idle') AND last_active_at < now() - make_interval(secs => $1))
                  OR (state = 'deep-sleep' AND sleep_confirmed_at IS NULL
                      AND (lifecycle_lease_until IS NULL OR lifecycle_lease_until < now())))
           LIMIT $3
           FOR UPDATE SKIP LOCKED)
        RETURNING id, node_id`,
      [deepS, leaseS, batch],
    );
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
    const { rows } = await this.db.query<{ id: string }>(
      `UPDATE sessions
          SET state = 'deep-sleep', sleep_confirmed_at = NULL,
              lifecycle_lease_until = now() + make_interval(secs => $2)
        WHERE id IN (
          SELECT s.id FROM sessions s
           WHERE s.node_id = $1 AND s.deleted_at IS NULL AND s.expires_at > now()
             AND s.state <> 'creating' AND ${UNMOVED}
             AND (s.lifecycle_lease_until IS NULL OR s.lifecycle_lease_until < now())
           LIMIT $3
           FOR UPDATE SKIP LOCKED)
        RETURNING id`,
      [nodeId, leaseS, batch],
    );
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
    const { rows } = await this.db.query<{ ms: number | null }>(
      `SELECT (EXTRACT(EPOCH FROM LEAST(
                 (SELECT min(expires_at) FROM sessions WHERE deleted_at IS NULL),
                 (SELECT min(last_active_at) FROM sessions
                   WHERE deleted_at IS NULL AND state = 'active') + make_interval(secs => $1),
                 (SELECT min(last_active_at) FROM sessions
                   WHERE deleted_at IS NULL AND state = 'idle') + make_interval(secs => $2)
               ) - now()) * 1000)::float8 AS ms`,
      [idleS, deepS],
    );
    return rows[0]?.ms ?? null;
  }

  /** Claims ended sessions whose sandbox is not yet removed, under a lease of `leaseS`. */
  async claimPendingDestroys(leaseS: number, batch = 20): Promise<PendingDestroy[]> {
    const { rows } = await this.db.query<{ id: string; node_id: string; saved_in: string | null }>(
      `UPDATE sessions SET destroy_lease_until = now() + make_interval(secs => $1)
        WHERE id IN (
          SELECT id FROM sessions
           WHERE deleted_at IS NOT NULL AND destroyed_at IS NULL
             AND (destroy_lease_until IS NULL OR destroy_lease_until < now())
           ORDER BY deleted_at
           LIMIT $2
           FOR UPDATE SKIP LOCKED)
        RETURNING id, node_id, ${SAVED_IN}`,
      [leaseS, batch],
    );
    return rows.map((row) => ({ id: row.id, nodeId: row.node_id, savedIn: row.saved_in }));
  }
}
