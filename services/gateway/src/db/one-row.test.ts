import type pg from 'pg';
import type { Queryable } from './database';
import { oneRow } from './one-row';

/** A database that answers every query with `rows`, and keeps what it was asked. */
function answering(rows: pg.QueryResultRow[]): Queryable & { asked: unknown[][] } {
  const asked: unknown[][] = [];
  return {
    asked,
    query: <R extends pg.QueryResultRow>(text: string, params?: unknown[]) => {
      asked.push([text, params]);
      return Promise.resolve({ rows } as unknown as pg.QueryResult<R>);
    },
  };
}

describe('oneRow', () => {
  it('answers the first row of the query it makes', async () => {
    const db = answering([{ id: 'a' }, { id: 'b' }]);
    const missing = jest.fn(() => new Error('none'));
    await expect(oneRow(db, 'SELECT id FROM t WHERE id = $1', ['a'], missing)).resolves.toEqual({
      id: 'a',
    });
    expect(db.asked).toEqual([['SELECT id FROM t WHERE id = $1', ['a']]]);
    expect(missing).not.toHaveBeenCalled();
  });

  it("throws the missing error when there is no row, an async one's too", async () => {
    const none = answering([]);
    await expect(oneRow(none, 'SELECT 1', [], () => new Error('not here'))).rejects.toThrow(
      'not here',
    );
    await expect(
      oneRow(none, 'SELECT 1', [], () => Promise.resolve(new Error('gone since'))),
    ).rejects.toThrow('gone since');
  });
});
