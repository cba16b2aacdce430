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

/** One page of records and how many the account has in all. */
export interface Page<T> {
  rows: T[];
  total: number;
}

/** One page of an account's rows, newest first (then by id), each made a record by `toRecord`. */
export async function newestFirstPage<R extends pg.QueryResultRow, T>(
  db: Queryable,
  source: PageSource,
  window: PageWindow,
  toRecord: (row: R) => T,
): Promise<Page<T>> {
  const matching = `FROM ${source.from} WHERE account_id = $1 AND ${source.where}`;
  const [{ rows }, { rows: counted }] = await Promise.all([
    db.query<R>(
      `SELECT ${source.select} ${matching} ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
      [window.accountId, window.limit, window.offset],
    ),
    db.query<{ total: string }>(`SELECT count(*) AS total ${matching}`, [window.accountId]),
  ]);
  return { rows: rows.map(toRecord), total: Number(counted[0]?.total ?? 0) };
}
