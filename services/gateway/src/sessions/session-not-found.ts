import { AppError } from '@sandbox/errors';
import { isSessionId } from '@sandbox/contract';
import type { Queryable } from '../db/database';

export function sessionNotFound(sessionId: string): AppError {
  return new AppError('session_not_found', 'Session not found', { details: { sessionId } });
}

/** A string that cannot be a session id names no session: no query needed. */
export function requireSessionId(sessionId: string): void {
  if (!isSessionId(sessionId)) throw sessionNotFound(sessionId);
}

/**
 * 404 session_not_found; for a session lost with its node (`forgetLostNode`), saying so
 * (details.reason `node_lost`).
 */
export async function notFoundError(
  db: Queryable,
  sessionId: string,
  accountId: string,
): Promise<AppError> {
  const { rows } = await db.query<{ end_reason: string | null }>(
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
