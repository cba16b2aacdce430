import type { LimitExceeded } from '@sandbox/contract';

/** Webhook ids: `wh_` + 24 lowercase alphanumerics. */
export const WEBHOOK_ID_PATTERN = /^wh_[a-z0-9]{24}$/;

/** Events an integrator can subscribe a webhook to (decisions.md). */
export const WEBHOOK_EVENTS = [
  'execution.completed',
  'session.expired',
  'session.lost',
  'resource_limit.exceeded',
] as const;

export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** The `data` of each event (docs/api.md#webhooks). */
export interface WebhookEventData {
  'execution.completed': {
    sessionId: string;
    exitCode: number;
    timedOut: boolean;
    executionTime: number;
    memoryUsed: number;
    cpuTime: number;
  };
  'session.expired': {
    sessionId: string;
    createdAt: string;
    expiresAt: string;
    metadata: Record<string, unknown>;
  };
  /** The session's node was removed as lost for good: the session has ended, its files gone. */
  'session.lost': {
    sessionId: string;
    nodeId: string;
    createdAt: string;
    metadata: Record<string, unknown>;
  };
  'resource_limit.exceeded': {
    sessionId: string;
    /** memory: a process was killed out of memory; disk: the session disk is full; processes: a fork failed at the process limit. */
    limit: LimitExceeded['limit'];
    /** The limit in its unit: MB for memory and disk, a count for processes. */
    max: number;
  };
}

/**
 * Undelivered events an endpoint may have waiting; past this, new events for it are dropped
 * (an endpoint that far behind is failing, and is disabled when it keeps failing).
 */
export const MAX_PENDING_PER_ENDPOINT = 10_000;

/** ISO-8601 UTC text of a timestamptz column, as the API writes timestamps. */
export const isoSql = (column: string): string =>
  `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** A new webhook-id, made in SQL (one per event, shared by all endpoints receiving it). */
export const NEW_EVENT_ID_SQL = `'msg_' || replace(gen_random_uuid()::text, '-', '')`;

/**
 * Inserts, for each row of `source` (which has `account_id`, `event_id` and `data` (json)
 * columns), one delivery per endpoint of that account subscribed to `type`. The payload is
 * the Standard Webhooks envelope, fixed now so that every retry sends the same bytes.
 * Disabled endpoints, and endpoints with MAX_PENDING_PER_ENDPOINT events waiting, get none.
 */
export function enqueueFromSql(type: WebhookEvent, source: string): string {
  return `INSERT INTO webhook_deliveries (event_id, endpoint_id, event_type, payload)
    SELECT ev.event_id, e.id, '${type}',
           json_build_object('type', '${type}', 'timestamp', ${isoSql('now()')}, 'data', ev.data)::text
      FROM ${source} ev
      JOIN webhook_endpoints e ON e.account_id = ev.account_id AND '${type}' = ANY (e.events)
     WHERE e.disabled_at IS NULL
       AND (SELECT count(*) FROM (
              SELECT 1 FROM webhook_deliveries p
               WHERE p.endpoint_id = e.id AND p.status = 'pending'
               LIMIT ${MAX_PENDING_PER_ENDPOINT}) backlog) < ${MAX_PENDING_PER_ENDPOINT}`;
}
