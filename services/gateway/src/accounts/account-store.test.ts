import type { Database } from '../db/database';
import { LocalInvalidations } from '../cache/invalidations';
import { AccountStore } from './account-store';

/** A database double that counts the statements it is sent. */
function countingDb(): { db: Database; statements: string[] } {
  const statements: string[] = [];
  const db = {
    query: (text: string) => {
      statements.push(text);
      return Promise.resolve({ rows: [], rowCount: 0 });
    },
  } as unknown as Database;
  return { db, statements };
}

describe('AccountStore.touchKey', () => {
  it('asks the database at most once a minute per key', async () => {
    const { db, statements } = countingDb();
    const store = new AccountStore(db);
    await store.touchKey('key_a', 0);
    await store.touchKey('key_a', 30_000);
    await store.touchKey('key_b', 30_000);
    await store.touchKey('key_a', 59_999);
    expect(statements).toHaveLength(2);
    await store.touchKey('key_a', 60_000);
    expect(statements).toHaveLength(3);
    expect(statements[0]).toMatch(/UPDATE api_keys SET last_used_at/);
  });
});

/** A database double with one key's principal row, revoked when a revoke statement comes. */
function keyDb(): { db: Database; statements: string[] } {
  const statements: string[] = [];
  let revoked = false;
  const principalRow = {
    key_id: 'key_a',
    account_id: 'acc_a',
    scopes: ['sessions'],
    plan: 'free',
    plan_overrides: {},
    name: 'free',
    max_concurrent_sessions: 5,
  };
  const db = {
    query: (text: string) => {
      statements.push(text);
      if (/^UPDATE api_keys SET revoked_at/.test(text)) {
        revoked = true;
        return Promise.resolve({ rows: [{ id: 'key_a', created_at: new Date() }], rowCount: 1 });
      }
      if (/FROM api_keys k/.test(text)) {
        return Promise.resolve({ rows: revoked ? [] : [principalRow], rowCount: 1 });
      }
      return Promise.resolve({ rows: [], rowCount: 0 });
    },
  } as unknown as Database;
  return { db, statements };
}

describe('AccountStore.findPrincipal', () => {
  const lookups = (statements: string[]) => statements.filter((s) => /FROM api_keys k/.test(s));

  it('reads a key once, then answers from memory while nothing changed', async () => {
    const { db, statements } = keyDb();
    const store = new AccountStore(db, new LocalInvalidations());
    const first = await store.findPrincipal('sk_test_value');
    expect(first).toMatchObject({ keyId: 'key_a', accountId: 'acc_a' });
    expect(await store.findPrincipal('sk_test_value')).toEqual(first);
    expect(lookups(statements)).toHaveLength(1);
  });

  it('does not remember keys it does not know', async () => {
    const { db, statements } = countingDb();
    const store = new AccountStore(db, new LocalInvalidations());
    expect(await store.findPrincipal('sk_unknown')).toBeUndefined();
    expect(await store.findPrincipal('sk_unknown')).toBeUndefined();
    expect(lookups(statements)).toHaveLength(2);
  });

  it('sees a revoke made through another replica on the next request', async () => {
    const { db } = keyDb();
    const shared = new LocalInvalidations();
    const replicaA = new AccountStore(db, shared);
    const replicaB = new AccountStore(db, shared);
    expect(await replicaA.findPrincipal('sk_test_value')).toBeDefined();
    await replicaB.revokeKey('key_a');
    expect(await replicaA.findPrincipal('sk_test_value')).toBeUndefined();
  });
});
