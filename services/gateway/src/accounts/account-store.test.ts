import type { Database } from '../db/database';
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
