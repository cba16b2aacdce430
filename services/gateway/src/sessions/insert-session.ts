import { AppError } from '@sandbox/errors';
import type { Database, Queryable } from '../db/database';
import { oneRow } from '../db/one-row';
import {
  COLUMNS,
  toRecord,
  type NewSession,
  type SessionRecord,
  type SessionRow,
} from './session-record';

/**
 * Inserts a session in state `creating`, enforcing the account's concurrent-session limit
 * atomically, in one round trip (migration 0008: the account row is locked while counting);
 * 429 session_limit_exceeded past it.
 */
export async function insertSession(db: Queryable, session: NewSession): Promise<SessionRecord> {
  const row = await oneRow<SessionRow>(
    db,
    `SELECT ${COLUMNS} FROM insert_session($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
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
      session.previewTokenSealed ?? null,
    ],
    () =>
      new AppError('session_limit_exceeded', 'Concurrent session limit reached', {
        details: { limit: session.maxConcurrent },
      }),
  );
  return toRecord(row);
}

/**
 * Inserts all of `sessions` or none: in one transaction, which holds the account's row from
 * the first insert on, so that the limit counts the earlier ones of the same call.
 */
export function insertSessions(
  db: Database,
  sessions: readonly NewSession[],
): Promise<SessionRecord[]> {
  return db.transaction(async (tx) => {
    const records: SessionRecord[] = [];
    for (const session of sessions) records.push(await insertSession(tx, session));
    return records;
  });
}
