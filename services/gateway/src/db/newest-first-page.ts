import type pg from 'pg';
import type { Queryable } from './database';

/** The rows of one account a page lists: `select` from `from` where `where` too. */
export interface PageSource {
  select: string;
  from: string;
  /** A condition beside the account's: SQL the store writes, never input. */
  where: string;
}

/** Which page: `limit` rows after `offset` of the account's. */
export interface PageWindow {
  accountId: string;
  limit: number;
  offset: number;
}

/** One page of an account's rows, newest first (then by id), and how many rows it has in all. */
export async function newestFirstPage<R extends pg.QueryResultRow>(
  db: Queryable,
  source: PageSource,
  window: PageWindow,
): Promise<{ rows: R[]; total: number }> {
  const matching = `FROM ${source.from} WHERE account_id = $1 AND ${source.where}`;
  const [{ rows }, { rows: counted }] = await Promise.all([
    db.query<R>(
      `SELECT ${source.select} ${matching} ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
      [window.accountId, window.limit, window.offset],
    ),
    db.query<{ total: string }>(`SELECT count(*) AS total ${matching}`, [window.accountId]),
  ]);
  return { rows, total: Number(counted[0]?.total ?? 0) };
}
