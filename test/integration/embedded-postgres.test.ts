import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AccountStore,
  createDatabase,
  migrate,
  SessionStore,
  startEmbeddedPostgres,
} from '@sandbox/gateway';

it('runs the schema and the account store on embedded PGlite (no Postgres server)', async () => {
  const embedded = await startEmbeddedPostgres('memory');
  const db = createDatabase({ connectionString: embedded.connectionString, maxConnections: 1 });
  try {
    const applied = await migrate(db);
    expect(applied).toContain('0001_initial.sql');
    expect(await migrate(db)).toEqual([]);
    const accounts = new AccountStore(db);
    const account = await accounts.createAccount({ name: 'embedded', plan: 'paid' });
    const key = await accounts.createKey(account.id, { name: 'k', scopes: ['sessions'] });
    const principal = await accounts.findPrincipal(key.key);
    expect(principal).toMatchObject({
      accountId: account.id,
      plan: 'paid',
      limits: { requestsPerMinute: 1000, maxConcurrentSessions: 100 },
    });
    // Sessions are inserted by a plpgsql function (migration 0008), limit included.
    const sessions = new SessionStore(db);
    const session = (id: string) => ({
      id,
      accountId: account.id,
      nodeId: 'local',
      metadata: {},
      resourceLimits: { memory: 512, cpu: 0.5, timeout: 30, disk: 1024 },
      ttlS: 60,
      maxConcurrent: 1,
    });
    const first = await sessions.insert(session('ses_' + 'a'.repeat(24)));
    expect(first).toMatchObject({ accountId: account.id, state: 'creating' });
    await expect(sessions.insert(session('ses_' + 'b'.repeat(24)))).rejects.toMatchObject({
      code: 'session_limit_exceeded',
    });
  } finally {
    await db.close();
    await embedded.stop();
  }
});

it("runs PGlite off the gateway's event loop: a long query does not hold it", async () => {
  const embedded = await startEmbeddedPostgres('memory');
  const db = createDatabase({ connectionString: embedded.connectionString, maxConnections: 1 });
  try {
    let last = performance.now();
    let longestGap = 0;
    const ticker = setInterval(() => {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
    }, 5);
    const started = performance.now();
    // Seconds of WebAssembly work for the database, none for this thread.
    await db.query('SELECT count(*) FROM generate_series(1, 4000000) AS g(n) WHERE n % 7 = 3');
    const queryMs = performance.now() - started;
    clearInterval(ticker);
    expect(queryMs).toBeGreaterThan(500);
    // On the gateway's thread the query would be one gap as long as itself.
    expect(longestGap).toBeLessThan(queryMs / 2);
  } finally {
    await db.close();
    await embedded.stop();
  }
});

it("refuses to start, with PGlite's reason, on a data directory it cannot open", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pglite-bad-'));
  try {
    writeFileSync(join(dir, 'PG_VERSION'), '99\n');
    await expect(startEmbeddedPostgres(dir)).rejects.toThrow(/embedded Postgres did not start/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
