import pg from 'pg';
import { callingStorage } from './storage-errors';

export interface Queryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    params?: unknown[],
  ): Promise<pg.QueryResult<R>>;
}

export interface Database extends Queryable {
  /** Runs `work` in one transaction on one connection; rolls back when it throws. */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  connectionString: string;
  /** Pool size; the embedded database serves one connection at a time. */
  maxConnections?: number;
  /** Postgres schema to use (tests give each file its own). */
  schema?: string;
}

/**
 * A Postgres pool behind the small Database interface. A database out of reach fails every
 * call with 503 service_unavailable (storage-errors.ts), never with the driver's error.
 */
export function createDatabase(options: DatabaseOptions): Database {
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.maxConnections ?? 10,
    ...(options.schema === undefined ? {} : { options: `-c search_path=${options.schema}` }),
  });
  pool.on('error', () => {
    // An idle client lost its connection; the pool replaces it on next use.
  });
  return {
    query: (text, params) => callingStorage(() => pool.query(text, params)),
    transaction: (work) =>
      callingStorage(async () => {
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          const result = await work(client);
          await client.query('COMMIT');
          return result;
        } catch (err) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw err;
        } finally {
          client.release();
        }
      }),
    close: () => pool.end(),
  };
}
