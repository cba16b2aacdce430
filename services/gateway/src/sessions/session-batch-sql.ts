import { UNMOVED } from '../nodes/node-store';
import { enqueueFromSql, isoSql, NEW_EVENT_ID_SQL } from '../webhooks/events';
import { LIVE, SAVED_IN } from './session-record';

// Statements over many sessions at once: the sweeps (expiry, idle, deep sleep, removal) and
// their clock, a drain's evacuations, a lost node's end. Each claim takes its batch FOR UPDATE
// SKIP LOCKED: every replica can run it at once, and each row is claimed by one of them.

/**
 * Ends sessions past their TTL or stuck in `creating` for $1 s, up to $2 of them, with a
 * `session.expired` event each in the same statement; returns their ids.
 */
export const EXPIRE_DUE_SQL = `WITH expired AS (
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
   SELECT id FROM expired`;

/** Marks up to $2 active sessions without a request for $1 s as idle; returns ids and nodes. */
export const MARK_IDLE_DUE_SQL = `UPDATE sessions SET state = 'idle'
    WHERE id IN (
      SELECT id FROM sessions
       WHERE ${LIVE} AND state = 'active'
         AND last_active_at < now() - make_interval(secs => $1)
       ORDER BY last_active_at
       LIMIT $2
       FOR UPDATE SKIP LOCKED)
    RETURNING id, node_id`;

/**
 * Marks up to $3 sessions without a request for $1 s as in deep sleep, or claims again an
 * unconfirmed sleeper whose lease ended, under a lease of $2 s; returns their ids and nodes.
 */
export const MARK_DEEP_SLEEP_DUE_SQL = `UPDATE sessions
      SET state = 'deep-sleep', lifecycle_lease_until = now() + make_interval(secs => $2)
    WHERE id IN (
      SELECT id FROM sessions
       WHERE ${LIVE}
         AND ((state IN ('active', 'idle') AND last_active_at < now() - make_interval(secs => $1))
              OR (state = 'deep-sleep' AND sleep_confirmed_at IS NULL
                  AND (lifecycle_lease_until IS NULL OR lifecycle_lease_until < now())))
       LIMIT $3
       FOR UPDATE SKIP LOCKED)
    RETURNING id, node_id`;

/**
 * Claims up to $3 sessions node $1 must still move, marked as in deep sleep, under a lease of
 * $2 s; returns their ids.
 */
export const CLAIM_EVACUATIONS_SQL = `UPDATE sessions
      SET state = 'deep-sleep', sleep_confirmed_at = NULL,
          lifecycle_lease_until = now() + make_interval(secs => $2)
    WHERE id IN (
      SELECT s.id FROM sessions s
       WHERE s.node_id = $1 AND s.deleted_at IS NULL AND s.expires_at > now()
         AND s.state <> 'creating' AND ${UNMOVED}
         AND (s.lifecycle_lease_until IS NULL OR s.lifecycle_lease_until < now())
       LIMIT $3
       FOR UPDATE SKIP LOCKED)
    RETURNING id`;

/** Milliseconds until the next expiry, idle after $1 s or deep sleep after $2 s (null: none). */
export const MS_UNTIL_NEXT_TRANSITION_SQL = `SELECT (EXTRACT(EPOCH FROM LEAST(
             (SELECT min(expires_at) FROM sessions WHERE deleted_at IS NULL),
             (SELECT min(last_active_at) FROM sessions
               WHERE deleted_at IS NULL AND state = 'active') + make_interval(secs => $1),
             (SELECT min(last_active_at) FROM sessions
               WHERE deleted_at IS NULL AND state = 'idle') + make_interval(secs => $2)
           ) - now()) * 1000)::float8 AS ms`;

/**
 * Claims up to $2 ended sessions whose sandbox is not yet removed, under a lease of $1 s;
 * returns their ids, nodes and (confirmed sleepers') stores.
 */
export const CLAIM_PENDING_DESTROYS_SQL = `UPDATE sessions SET destroy_lease_until = now() + make_interval(secs => $1)
    WHERE id IN (
      SELECT id FROM sessions
       WHERE deleted_at IS NOT NULL AND destroyed_at IS NULL
         AND (destroy_lease_until IS NULL OR destroy_lease_until < now())
       ORDER BY deleted_at
       LIMIT $2
       FOR UPDATE SKIP LOCKED)
    RETURNING id, node_id, ${SAVED_IN}`;

/**
 * Ends the sessions of node $1 that cannot wake elsewhere (all but confirmed sleepers in a
 * shared store), with a `session.lost` event each; returns their ids.
 */
export const FORGET_LOST_NODE_SQL = `WITH lost AS (
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
   SELECT id FROM lost`;
