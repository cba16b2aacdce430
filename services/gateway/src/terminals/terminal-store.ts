import { createHash } from 'node:crypto';
import type { TerminalSpec } from '../agents/agent-messages';
import type { Database } from '../db/database';

export interface TerminalRecord {
  id: string;
  accountId: string;
  sessionId: string;
  spec: TerminalSpec;
}

interface Row {
  id: string;
  account_id: string;
  session_id: string;
  spec: TerminalSpec;
}

const toRecord = (row: Row): TerminalRecord => ({
  id: row.id,
  accountId: row.account_id,
  sessionId: row.session_id,
  spec: row.spec,
});

export function hashTerminalToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** Terminals made and not yet opened; each opens once. */
export class TerminalStore {
  constructor(private readonly db: Database) {}

  async create(record: TerminalRecord, tokenHash: Buffer, tokenExpiresAt: Date): Promise<void> {
    await this.db.query(
      `INSERT INTO terminals (id, account_id, session_id, spec, token_hash, token_expires_at)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [record.id, record.accountId, record.sessionId, record.spec, tokenHash, tokenExpiresAt],
    );
  }

  /**
   * Marks the terminal opened and returns it, when it is `sessionId`'s, it was never opened and
   * `proof` holds: the hash of its unexpired token, or its account's id (for the account's own
   * API key: no expiry, the key is the proof). Else undefined, whoever asks (an unknown, used
   * or expired token look the same; a wrong path spends nothing).
   */
  async open(
    id: string,
    sessionId: string,
    proof: { tokenHash: Buffer } | { accountId: string },
  ): Promise<TerminalRecord | undefined> {
    const [condition, value] =
      'tokenHash' in proof
        ? ['token_hash = $3 AND token_expires_at > now()', proof.tokenHash]
        : ['account_id = $3', proof.accountId];
    const { rows } = await this.db.query<Row>(
      `UPDATE terminals SET connected_at = now()
        WHERE id = $1 AND session_id = $2 AND ${condition} AND connected_at IS NULL
        RETURNING id, account_id, session_id, spec`,
      [id, sessionId, value],
    );
    return rows[0] === undefined ? undefined : toRecord(rows[0]);
  }

  /** Forgets terminals made more than a day ago (opened or not): each sweep does. */
  async purgeExpired(): Promise<number> {
    const { rowCount } = await this.db.query(
      `DELETE FROM terminals WHERE created_at < now() - interval '1 day'`,
    );
    return rowCount ?? 0;
  }
}
