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
