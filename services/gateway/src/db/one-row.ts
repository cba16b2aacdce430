import type pg from 'pg';
import type { Queryable } from './database';

/**
 * The row a query of one row (a look-up or a change by id) answers; when it answers none, the
 * error `missing` makes (awaited: finding out why may take another query).
 */
export async function oneRow<R extends pg.QueryResultRow>(
  db: Queryable,
  text: string,
  params: unknown[],
  missing: () => Error | Promise<Error>,
): Promise<R> {
  const { rows } = await db.query<R>(text, params);
  const row = rows[0];
  if (row === undefined) throw await missing();
  return row;
}
