import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export interface EmbeddedPostgres {
  /** A `postgres://` URL that node-postgres can use. */
  readonly connectionString: string;
  stop(): Promise<void>;
}

/**
 * Starts PGlite (Postgres compiled to WebAssembly) behind a loopback socket, for running the
 * gateway without a Postgres server. It serves one connection at a time.
 */
export async function startEmbeddedPostgres(dataDir: string): Promise<EmbeddedPostgres> {
  if (dataDir !== 'memory') mkdirSync(dataDir, { recursive: true });
  const db = await PGlite.create(dataDir === 'memory' ? undefined : dataDir);
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 1 });
  await server.start();
  const address = server.getServerConn();
  return {
    connectionString: `postgres://postgres@${address}/postgres?sslmode=disable`,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}
