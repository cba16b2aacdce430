import type { Database } from '../db/database';
import { LocalInvalidations } from '../cache/invalidations';
import { MemoryRateLimiter } from '../limits/memory-rate-limiter';
import type { RateDecision } from '../limits/rate-limiter';
import { AccountStore, type PrincipalCount } from './account-store';

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
function keyDb(): {
  db: Database;
  statements: string[];
  setRequestsPerMinute: (n: number) => void;
} {
  const statements: string[] = [];
  let revoked = false;
  const principalRow = {
    requests_per_minute: 3,
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
  return {
    db,
    statements,
    setRequestsPerMinute: (n) => {
      principalRow.requests_per_minute = n;
    },
  };
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

/** Stamps in this process whose caches can be made to start over, as a Redis reconnect does. */
class ResettableInvalidations extends LocalInvalidations {
  private readonly resets: Array<() => void> = [];
  override onReset(listener: () => void): void {
    this.resets.push(listener);
    super.onReset(listener);
  }
  reset(): void {
    for (const listener of this.resets) listener();
  }
}

const lookups = (statements: string[]) => statements.filter((s) => /FROM api_keys k/.test(s));
const KEY = 'sk_test_value';

/** Counts in `limiter`; `beforeGuarded` runs before each guarded count. */
function counting(limiter: MemoryRateLimiter, beforeGuarded?: () => void) {
  const calls = { guarded: 0, plain: 0 };
  const count: PrincipalCount<RateDecision> = {
    guarded: (principal, guard) => {
      calls.guarded += 1;
      beforeGuarded?.();
      return limiter.consumeIfStamped(
        principal.keyId,
        principal.limits.requestsPerMinute,
        60_000,
        guard,
      );
    },
    plain: (principal) => {
      calls.plain += 1;
      return limiter.consume(principal.keyId, principal.limits.requestsPerMinute, 60_000);
    },
  };
  return { count, calls };
}

describe('AccountStore.admit', () => {
  it('reads the key once, then checks it and counts the request in one step', async () => {
    const { db, statements } = keyDb();
    const invalidations = new LocalInvalidations();
    const store = new AccountStore(db, invalidations);
    const { count, calls } = counting(new MemoryRateLimiter(() => 0, invalidations));
    const remaining: number[] = [];
    for (let i = 0; i < 4; i += 1) {
      const admitted = await store.admit(KEY, count);
      expect(admitted?.principal).toMatchObject({ keyId: 'key_a' });
      remaining.push(admitted!.decision.remaining);
      if (i === 3) expect(admitted!.decision.allowed).toBe(false);
    }
    expect(remaining).toEqual([2, 1, 0, 0]);
    expect(calls).toEqual({ guarded: 3, plain: 1 });
    expect(lookups(statements)).toHaveLength(1);
  });

  it('refuses a key another replica revoked, counting nothing for it', async () => {
    const { db } = keyDb();
    const shared = new LocalInvalidations();
    const replicaA = new AccountStore(db, shared);
    const { count, calls } = counting(new MemoryRateLimiter(() => 0, shared));
    expect(await replicaA.admit(KEY, count)).toBeDefined();
    await new AccountStore(db, shared).revokeKey('key_a');
    expect(await replicaA.admit(KEY, count)).toBeUndefined();
    expect(calls).toEqual({ guarded: 1, plain: 1 });
  });

  it('counts under the limit changed on another replica, once', async () => {
    const { db, setRequestsPerMinute } = keyDb();
    const shared = new LocalInvalidations();
    const store = new AccountStore(db, shared);
    const { count } = counting(new MemoryRateLimiter(() => 0, shared));
    expect((await store.admit(KEY, count))?.decision).toMatchObject({ limit: 3, remaining: 2 });
    setRequestsPerMinute(10);
    await shared.bump(['principals']);
    expect((await store.admit(KEY, count))?.decision).toMatchObject({ limit: 10, remaining: 8 });
    expect((await store.admit(KEY, count))?.decision).toMatchObject({ limit: 10, remaining: 7 });
  });

  it('counts a request once when the caches start over while it is checked', async () => {
    const { db, statements } = keyDb();
    const invalidations = new ResettableInvalidations();
    const store = new AccountStore(db, invalidations);
    const { count, calls } = counting(new MemoryRateLimiter(() => 0, invalidations), () =>
      invalidations.reset(),
    );
    await store.admit(KEY, count);
    const admitted = await store.admit(KEY, count);
    expect(admitted?.decision).toMatchObject({ allowed: true, remaining: 1 });
    expect(calls).toEqual({ guarded: 1, plain: 1 });
    expect(lookups(statements)).toHaveLength(2);
  });

  it('goes the long way when the stamp cannot be read', async () => {
    const { db, statements } = keyDb();
    const store = new AccountStore(db, new LocalInvalidations());
    // No stamps for the limiter: it reads every stamp as unknown, as with Redis out of reach.
    const { count, calls } = counting(new MemoryRateLimiter(() => 0));
    await store.admit(KEY, count);
    expect((await store.admit(KEY, count))?.decision.remaining).toBe(1);
    expect(calls).toEqual({ guarded: 1, plain: 2 });
    expect(lookups(statements)).toHaveLength(1);
  });
});
