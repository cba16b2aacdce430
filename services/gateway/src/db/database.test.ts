import { createServer } from 'node:net';
import { createDatabase } from './database';

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

it('fails with 503 service_unavailable while Postgres is out of reach', async () => {
  const db = createDatabase({
    connectionString: `postgres://x:y@127.0.0.1:${await closedPort()}/z`,
  });
  try {
    const unavailable = { code: 'service_unavailable', retryAfter: 1 };
    await expect(db.query('SELECT 1')).rejects.toMatchObject(unavailable);
    await expect(db.transaction((tx) => tx.query('SELECT 1'))).rejects.toMatchObject(unavailable);
  } finally {
    await db.close();
  }
});
