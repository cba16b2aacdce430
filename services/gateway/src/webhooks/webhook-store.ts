import { AppError } from '@sandbox/errors';
import { LocalInvalidations, type Invalidations } from '../cache/invalidations';
import { StampedCache } from '../cache/stamped-cache';
import type { Database, Queryable } from '../db/database';
import {
  enqueueFromSql,
  NEW_EVENT_ID_SQL,
  type WebhookEvent,
  type WebhookEventData,
} from './events';

export interface WebhookEndpoint {
  id: string;
  url: string;
  events: WebhookEvent[];
  createdAt: Date;
  /** Set when it failed every delivery for too long, or its URL is refused: it receives nothing. */
  disabledAt: Date | null;
  /** Why it was disabled; null when it is not (or a replica of the release before disabled it). */
  disabledReason: string | null;
}

/** Where an endpoint sends, and whose it is. */
export interface EndpointTarget {
  id: string;
  url: string;
  accountId: string;
}

export interface DueDelivery {
  eventId: string;
  endpointId: string;
  accountId: string;
  url: string;
  sealedSecret: string;
  payload: string;
  /** This attempt's number, from 1. */
  attempt: number;
}

/** Endpoints an account may register. */
export const MAX_WEBHOOKS_PER_ACCOUNT = 20;
/** Delivered and failed deliveries are kept this long, then purged. */
const KEEP_FINISHED_DAYS = 7;

interface EndpointRow {
  id: string;
  url: string;
  events: WebhookEvent[];
  created_at: Date;
  disabled_at: Date | null;
  disabled_reason: string | null;
}

const ENDPOINT_COLUMNS = 'id, url, events, created_at, disabled_at, disabled_reason';

const toEndpoint = (row: EndpointRow): WebhookEndpoint => ({
  id: row.id,
  url: row.url,
  events: row.events,
  createdAt: row.created_at,
  disabledAt: row.disabled_at,
  disabledReason: row.disabled_reason,
});

/** The reason of an endpoint disabled for failures (migration 0013 gives the older ones it too). */
export const FAILED_TOO_LONG = 'every delivery failed for too long';

/** Fails the pending deliveries of an endpoint just disabled. */
async function failPending(tx: Queryable, endpointId: string): Promise<void> {
  await tx.query(
    `UPDATE webhook_deliveries SET status = 'failed', last_error = 'endpoint disabled'
      WHERE endpoint_id = $1 AND status = 'pending'`,
    [endpointId],
  );
}

export function webhookNotFound(webhookId: string): AppError {
  return new AppError('not_found', 'Webhook not found', { details: { webhookId } });
}

/** The stamp bumped when an account's endpoints change (see `Invalidations`). */
export const webhooksStamp = (accountId: string): string => `webhooks:${accountId}`;
/** Accounts whose subscribed events a replica keeps. */
const MAX_CACHED_ACCOUNTS = 10_000;

/**
 * Webhook endpoints and the outbox of their deliveries, in Postgres. Which events an
 * account's endpoints subscribe to is kept by each replica under the account's stamp, so that
 * an event nobody subscribes to (every run's `execution.completed`, for most accounts) costs
 * a Redis read, not a Postgres write; a registration or a deletion on any replica applies to
 * the next event on every replica.
 */
export class WebhookStore {
  private readonly subscribed: StampedCache<ReadonlySet<WebhookEvent>>;

  constructor(
    private readonly db: Database,
    private readonly invalidations: Invalidations = new LocalInvalidations(),
  ) {
    this.subscribed = new StampedCache(invalidations, MAX_CACHED_ACCOUNTS);
  }

  async create(
    accountId: string,
    input: { id: string; url: string; events: WebhookEvent[]; sealedSecret: string },
  ): Promise<WebhookEndpoint> {
    const endpoint = await this.db.transaction(async (tx) => {
      // One registration at a time per account, so the cap holds under concurrency.
      await tx.query('SELECT id FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
      const { rows: count } = await tx.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM webhook_endpoints WHERE account_id = $1',
        [accountId],
      );
      if ((count[0]?.n ?? 0) >= MAX_WEBHOOKS_PER_ACCOUNT) {
        throw new AppError(
          'invalid_request',
          `At most ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks per account`,
          { details: { max: MAX_WEBHOOKS_PER_ACCOUNT } },
        );
      }
      const { rows } = await tx.query<EndpointRow>(
        `INSERT INTO webhook_endpoints (id, account_id, url, events, secret_encrypted)
         VALUES ($1, $2, $3, $4, $5) RETURNING ${ENDPOINT_COLUMNS}`,
        [input.id, accountId, input.url, input.events, input.sealedSecret],
      );
      return toEndpoint(rows[0] as EndpointRow);
    });
    await this.changed(accountId);
    return endpoint;
  }

  async list(accountId: string): Promise<WebhookEndpoint[]> {
    const { rows } = await this.db.query<EndpointRow>(
      `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints
        WHERE account_id = $1 ORDER BY created_at, id`,
      [accountId],
    );
    return rows.map(toEndpoint);
  }

  /** Deletes the endpoint and its pending deliveries; false when the account has no such one. */
  async delete(accountId: string, webhookId: string): Promise<boolean> {
    const { rowCount } = await this.db.query(
      'DELETE FROM webhook_endpoints WHERE account_id = $1 AND id = $2',
      [accountId, webhookId],
    );
    const deleted = (rowCount ?? 0) > 0;
    if (deleted) await this.changed(accountId);
    return deleted;
  }

  /** After a change to the account's endpoints is committed: every replica reads them again. */
  private async changed(accountId: string): Promise<void> {
    this.subscribed.forget(accountId);
    // A lost bump is a lost Redis, on which every replica's cache starts over.
    await this.invalidations.bump([webhooksStamp(accountId)]).catch(() => undefined);
  }

  /**
   * Whether an endpoint of the account subscribes to `type`; true when that cannot be known
   * from the cache (Redis unreachable), so that no event is ever dropped by mistake.
   */
  private async subscribes(accountId: string, type: WebhookEvent): Promise<boolean> {
    const read = await this.subscribed.readStamps([webhooksStamp(accountId)]);
    if (read.stamps === undefined) return true;
    let events = this.subscribed.lookup(accountId, read);
    if (events === undefined) {
      const { rows } = await this.db.query<{ event: WebhookEvent }>(
        'SELECT DISTINCT unnest(events) AS event FROM webhook_endpoints WHERE account_id = $1',
        [accountId],
      );
      events = new Set(rows.map((row) => row.event));
      this.subscribed.keep(accountId, events, read);
    }
    return events.has(type);
  }

  /** Records an event for every endpoint of the account subscribed to it. */
  async enqueue<E extends WebhookEvent>(
    accountId: string,
    type: E,
    data: WebhookEventData[E],
    db: Queryable = this.db,
  ): Promise<void> {
    if (!(await this.subscribes(accountId, type))) return;
    await db.query(
      enqueueFromSql(
        type,
        `(SELECT $1::text AS account_id, ${NEW_EVENT_ID_SQL} AS event_id, $2::json AS data)`,
      ),
      [accountId, JSON.stringify(data)],
    );
  }

  /**
   * Claims deliveries that are due, fairly: at most one per endpoint, none for endpoints this
   * replica is busy with, and per account no more than `perAccount` less what this replica
   * already has in flight for it (`busyAccounts`), oldest first. Each is leased for `leaseS`
   * (a replica that dies while delivering leaves it to be retried when the lease ends) and its
   * attempt counted.
   */
  async claimDue(options: {
    batch: number;
    leaseS: number;
    perAccount: number;
    busyEndpoints: readonly string[];
    /** Deliveries in flight on this replica, by account id. */
    busyAccounts: ReadonlyMap<string, number>;
  }): Promise<DueDelivery[]> {
    const { rows } = await this.db.query<{
      event_id: string;
      endpoint_id: string;
      account_id: string;
      url: string;
      secret_encrypted: string;
      payload: string;
      attempts: number;
    }>(
      `WITH first_per_endpoint AS (
         SELECT event_id, endpoint_id, account_id, next_attempt_at FROM (
           SELECT d.event_id, d.endpoint_id, e.account_id, d.next_attempt_at,
                  row_number() OVER (PARTITION BY d.endpoint_id ORDER BY d.next_attempt_at) AS nth
             FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
            WHERE d.status = 'pending' AND d.next_attempt_at <= now() AND e.disabled_at IS NULL
              AND d.endpoint_id <> ALL ($3::text[])) ranked
          WHERE nth = 1),
       busy AS (
         SELECT * FROM unnest($4::text[], $6::int[]) AS busy(account_id, in_flight)),
       candidates AS (
         SELECT event_id, endpoint_id FROM (
           SELECT event_id, endpoint_id, account_id, next_attempt_at,
                  row_number() OVER (PARTITION BY account_id ORDER BY next_attempt_at) AS nth
             FROM first_per_endpoint) ranked
           LEFT JOIN busy USING (account_id)
          WHERE nth <= $5 - coalesce(busy.in_flight, 0)
          ORDER BY next_attempt_at
          LIMIT $1),
       due AS (
         SELECT d.event_id, d.endpoint_id
           FROM webhook_deliveries d JOIN candidates c USING (event_id, endpoint_id)
          WHERE d.status = 'pending' AND d.next_attempt_at <= now()
          FOR UPDATE OF d SKIP LOCKED)
       UPDATE webhook_deliveries d
          SET attempts = d.attempts + 1,
              next_attempt_at = now() + make_interval(secs => $2)
         FROM due, webhook_endpoints e
        WHERE d.event_id = due.event_id AND d.endpoint_id = due.endpoint_id
          AND e.id = d.endpoint_id
       RETURNING d.event_id, d.endpoint_id, e.account_id, e.url, e.secret_encrypted, d.payload,
                 d.attempts`,
      [
        options.batch,
        options.leaseS,
        options.busyEndpoints,
        [...options.busyAccounts.keys()],
        options.perAccount,
        [...options.busyAccounts.values()],
      ],
    );
    return rows.map((row) => ({
      eventId: row.event_id,
      endpointId: row.endpoint_id,
      accountId: row.account_id,
      url: row.url,
      sealedSecret: row.secret_encrypted,
      payload: row.payload,
      attempt: row.attempts,
    }));
  }

  async markDelivered(delivery: DueDelivery): Promise<void> {
    await this.db.query(
      `WITH delivered AS (
         UPDATE webhook_deliveries
            SET status = 'delivered', delivered_at = now(), last_error = NULL
          WHERE event_id = $1 AND endpoint_id = $2 AND attempts = $3 AND status = 'pending')
       UPDATE webhook_endpoints SET failing_since = NULL
        WHERE id = $2 AND failing_since IS NOT NULL`,
      [delivery.eventId, delivery.endpointId, delivery.attempt],
    );
  }

  /**
   * Records a failed attempt: retried after `retryInS`, or failed for good when undefined. An
   * endpoint with no success for `disableAfterS` is disabled, its pending deliveries failed.
   * Returns whether this attempt disabled it.
   */
  async markAttemptFailed(
    delivery: DueDelivery,
    error: string,
    retryInS: number | undefined,
    disableAfterS: number,
  ): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      await tx.query(
        `UPDATE webhook_deliveries
            SET last_error = $3,
                status = CASE WHEN $4::float8 IS NULL THEN 'failed' ELSE 'pending' END,
                next_attempt_at = now() + make_interval(secs => coalesce($4::float8, 0))
          WHERE event_id = $1 AND endpoint_id = $2 AND attempts = $5 AND status = 'pending'`,
        [
          delivery.eventId,
          delivery.endpointId,
          error.slice(0, 500),
          retryInS ?? null,
          delivery.attempt,
        ],
      );
      const { rows } = await tx.query<{ disabled: boolean }>(
        `UPDATE webhook_endpoints
            SET failing_since = coalesce(failing_since, now()),
                disabled_at = CASE
                  WHEN failing_since < now() - make_interval(secs => $2) THEN now()
                  ELSE disabled_at END,
                disabled_reason = CASE
                  WHEN failing_since < now() - make_interval(secs => $2) THEN $3
                  ELSE disabled_reason END
          WHERE id = $1 AND disabled_at IS NULL
          RETURNING disabled_at IS NOT NULL AS disabled`,
        [delivery.endpointId, disableAfterS, FAILED_TOO_LONG],
      );
      const disabled = rows[0]?.disabled === true;
      if (disabled) await failPending(tx, delivery.endpointId);
      return disabled;
    });
  }

  /** Every endpoint not disabled, of every account (to check them all again at start-up). */
  async listEnabled(): Promise<EndpointTarget[]> {
    const { rows } = await this.db.query<{ id: string; url: string; account_id: string }>(
      'SELECT id, url, account_id FROM webhook_endpoints WHERE disabled_at IS NULL ORDER BY id',
    );
    return rows.map((row) => ({ id: row.id, url: row.url, accountId: row.account_id }));
  }

  /**
   * Disables an endpoint for `reason` and fails its pending deliveries, as a failing one is.
   * Returns false when it was already disabled (or is gone).
   */
  async disable(endpointId: string, reason: string): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const { rowCount } = await tx.query(
        `UPDATE webhook_endpoints SET disabled_at = now(), disabled_reason = $2
          WHERE id = $1 AND disabled_at IS NULL`,
        [endpointId, reason],
      );
      const disabled = (rowCount ?? 0) > 0;
      if (disabled) await failPending(tx, endpointId);
      return disabled;
    });
  }

  /** Deliveries pending, and the age of the oldest (for the metrics). */
  async backlog(): Promise<{ pending: number; oldestAgeS: number }> {
    const { rows } = await this.db.query<{ pending: string; oldest_age_s: number | null }>(
      `SELECT count(*) AS pending,
              EXTRACT(EPOCH FROM now() - min(created_at))::float8 AS oldest_age_s
         FROM webhook_deliveries WHERE status = 'pending'`,
    );
    const row = rows[0];
    return { pending: Number(row?.pending ?? 0), oldestAgeS: row?.oldest_age_s ?? 0 };
  }

  async purgeFinished(): Promise<void> {
    await this.db.query(
      `DELETE FROM webhook_deliveries
        WHERE status <> 'pending' AND created_at < now() - make_interval(days => $1)`,
      [KEEP_FINISHED_DAYS],
    );
  }

  /** Endpoints whose sealed secret matches `predicate`. */
  async countSecrets(predicate: (sealed: string) => boolean): Promise<number> {
    const { rows } = await this.db.query<{ secret_encrypted: string }>(
      'SELECT secret_encrypted FROM webhook_endpoints',
    );
    return rows.filter((row) => predicate(row.secret_encrypted)).length;
  }

  /** Seals again, with `reseal`, every secret `isStale` says was sealed with an older key. */
  async resealSecrets(
    isStale: (sealed: string) => boolean,
    reseal: (sealed: string) => string,
  ): Promise<number> {
    const { rows } = await this.db.query<{ id: string; secret_encrypted: string }>(
      'SELECT id, secret_encrypted FROM webhook_endpoints',
    );
    let resealed = 0;
    for (const row of rows.filter((r) => isStale(r.secret_encrypted))) {
      await this.db.query(
        'UPDATE webhook_endpoints SET secret_encrypted = $2 WHERE id = $1 AND secret_encrypted = $3',
        [row.id, reseal(row.secret_encrypted), row.secret_encrypted],
      );
      resealed += 1;
    }
    return resealed;
  }
}
