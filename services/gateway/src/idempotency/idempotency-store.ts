import type { Database } from '../db/database';
import type { SecretBox } from '../secrets/secret-box';

/** How long a key's response is replayed (spec 8.4). */
export const IDEMPOTENCY_RETENTION_S = 24 * 60 * 60;
/** A first request still unfinished after this long is taken to have died with its gateway. */
export const IDEMPOTENCY_STALE_PENDING_S = 120;

export type IdempotencyRecord =
  | { state: 'pending'; requestHash: Buffer }
  | { state: 'done'; requestHash: Buffer; status: number; body: string };

interface Row {
  request_hash: Buffer;
  response_status: number | null;
  response_body: string | null;
}

const LIVE = `created_at > now() - make_interval(secs => ${IDEMPOTENCY_RETENTION_S})`;

/**
 * Idempotency keys per account in Postgres, shared by every gateway replica. Stored responses
 * can hold secrets (a private preview's token), so they are sealed when a SecretBox is given.
 */
export class IdempotencyStore {
  constructor(
    private readonly db: Database,
    private readonly box?: SecretBox,
  ) {}

  /**
   * Claims `key` for this request. True when this request owns it and must run; false when
   * another request holds it (then `find` tells its state).
   */
  async claim(accountId: string, key: string, requestHash: Buffer): Promise<boolean> {
    // A record past retention, or pending past the stale limit, no longer holds the key.
    await this.db.query(
      `DELETE FROM idempotency_keys
        WHERE account_id = $1 AND idempotency_key = $2
          AND (NOT (${LIVE})
               OR (response_status IS NULL
                   AND created_at < now() - make_interval(secs => ${IDEMPOTENCY_STALE_PENDING_S})))`,
      [accountId, key],
    );
    const { rowCount } = await this.db.query(
      `INSERT INTO idempotency_keys (account_id, idempotency_key, request_hash)
       VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
      [accountId, key, requestHash],
    );
    return rowCount === 1;
  }

  async find(accountId: string, key: string): Promise<IdempotencyRecord | undefined> {
    const { rows } = await this.db.query<Row>(
      `SELECT request_hash, response_status, response_body FROM idempotency_keys
        WHERE account_id = $1 AND idempotency_key = $2 AND ${LIVE}`,
      [accountId, key],
    );
    const row = rows[0];
    if (row === undefined) return undefined;
    if (row.response_status === null || row.response_body === null) {
      return { state: 'pending', requestHash: row.request_hash };
    }
    return {
      state: 'done',
      requestHash: row.request_hash,
      status: row.response_status,
      // A JSON body starts with `{`; a sealed one with its version.
      body:
        this.box !== undefined && !row.response_body.startsWith('{')
          ? this.box.open(row.response_body)
          : row.response_body,
    };
  }

  async complete(accountId: string, key: string, status: number, body: string): Promise<void> {
    await this.db.query(
      `UPDATE idempotency_keys SET response_status = $3, response_body = $4
        WHERE account_id = $1 AND idempotency_key = $2`,
      [accountId, key, status, this.box === undefined ? body : this.box.seal(body)],
    );
  }

  /** Lets a failed first request's key be used again. */
  async release(accountId: string, key: string): Promise<void> {
    await this.db.query(
      `DELETE FROM idempotency_keys
        WHERE account_id = $1 AND idempotency_key = $2 AND response_status IS NULL`,
      [accountId, key],
    );
  }

  /** Drops records past retention; returns how many. */
  async purgeExpired(): Promise<number> {
    const { rowCount } = await this.db.query(`DELETE FROM idempotency_keys WHERE NOT (${LIVE})`);
    return rowCount ?? 0;
  }
}
