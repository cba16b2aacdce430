import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Umzug, type UmzugStorage } from 'umzug';
import type { Database, Queryable } from './database';

/** services/gateway/migrations, from both src/db and dist/db. */
export const MIGRATIONS_DIR = join(__dirname, '..', '..', 'migrations');

/** Any fixed number shared by every replica: serializes concurrent migration runs. */
const MIGRATION_LOCK_ID = 7_314_001;

function tableStorage(tx: Queryable): UmzugStorage<Queryable> {
  return {
    async logMigration({ name }) {
      await tx.query('INSERT INTO schema_migrations (name) VALUES ($1)', [name]);
    },
    async unlogMigration({ name }) {
      await tx.query('DELETE FROM schema_migrations WHERE name = $1', [name]);
    },
    async executed() {
      const { rows } = await tx.query<{ name: string }>(
        'SELECT name FROM schema_migrations ORDER BY name',
      );
      return rows.map((row) => row.name);
    },
  };
}

/**
 * Applies every pending SQL migration in one transaction under an advisory lock, so that
 * replicas starting together migrate once and a failed migration leaves nothing half-done.
 */
export async function migrate(db: Database, dir = MIGRATIONS_DIR): Promise<string[]> {
  const files = readdirSync(dir)
    .filter((file) => file.endsWith('.sql'))
    .sort();
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_ID]);
    await tx.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         name text PRIMARY KEY,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    const umzug = new Umzug<Queryable>({
      context: tx,
      storage: tableStorage(tx),
      logger: undefined,
      migrations: files.map((file) => ({
        name: file,
        up: async ({ context }) => {
          await context.query(readFileSync(join(dir, file), 'utf8'));
        },
      })),
    });
    const applied = await umzug.up();
    return applied.map((migration) => migration.name);
  });
}
