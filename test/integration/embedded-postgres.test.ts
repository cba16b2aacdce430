import { AccountStore, createDatabase, migrate, startEmbeddedPostgres } from '@sandbox/gateway';

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
  } finally {
    await db.close();
    await embedded.stop();
  }
});
