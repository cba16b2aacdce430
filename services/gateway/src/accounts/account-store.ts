import { AppError } from '@sandbox/errors';
import { randomString, generateApiKey, hashApiKey } from '../auth/api-keys';
import type { Principal, Scope } from '../auth/principal';
import { LocalInvalidations, type Invalidations } from '../cache/invalidations';
import { StampedCache, type StampRead } from '../cache/stamped-cache';
import type { Database } from '../db/database';
import { oneRow } from '../db/one-row';
import { planLimitsFromRow, type PlanLimits, type PlanName, type PlanRow } from '../limits/plans';
import type { StampGuard } from '../limits/rate-limiter';
import type { Stamp } from '../cache/invalidations';

const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

export interface Account {
  id: string;
  name: string;
  plan: PlanName;
  /** The enterprise account's own values; empty on other plans. */
  planOverrides: Partial<PlanLimits>;
  /** What applies: the plan's numbers with the overrides on top. */
  limits: PlanLimits;
  createdAt: string;
}

export interface ApiKeyInfo {
  id: string;
  accountId: string;
  name: string;
  prefix: string;
  scopes: Scope[];
  createdAt: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

interface AccountRow extends PlanRow {
  id: string;
  name: string;
  plan: PlanName;
  plan_overrides: Partial<PlanLimits>;
  created_at: Date;
}

interface KeyRow {
  id: string;
  account_id: string;
  name: string;
  key_prefix: string;
  scopes: Scope[];
  created_at: Date;
  revoked_at: Date | null;
  last_used_at: Date | null;
}

const toAccount = (row: AccountRow): Account => ({
  id: row.id,
  name: row.name,
  plan: row.plan,
  planOverrides: row.plan_overrides,
  limits: planLimitsFromRow(row),
  createdAt: row.created_at.toISOString(),
});

/** Accounts with their plan's row, for the effective limits. */
const ACCOUNT_SELECT = `SELECT p.*, a.id, a.name, a.plan, a.plan_overrides, a.created_at
  FROM accounts a JOIN plans p ON p.name = a.plan`;

const toKey = (row: KeyRow): ApiKeyInfo => ({
  id: row.id,
  accountId: row.account_id,
  name: row.name,
  prefix: row.key_prefix,
  scopes: row.scopes,
  createdAt: row.created_at.toISOString(),
  revokedAt: row.revoked_at?.toISOString() ?? null,
  lastUsedAt: row.last_used_at?.toISOString() ?? null,
});

const KEY_COLUMNS =
  'id, account_id, name, key_prefix, scopes, created_at, revoked_at, last_used_at';

/** Custom limits belong to enterprise accounts only. */
export function checkCustomLimits(plan: PlanName, limits: object | undefined): void {
  if (limits !== undefined && Object.keys(limits).length > 0 && plan !== 'enterprise') {
    throw new AppError('invalid_request', 'Custom limits need the enterprise plan', {
      details: { field: 'limits' },
    });
  }
}

/** How `AccountStore.admit` counts a request against its caller's budget. */
export interface PrincipalCount<D> {
  /** Counts it only if `guard`'s stamp is unchanged, in the same round trip as its read. */
  guarded(
    principal: Principal,
    guard: StampGuard,
  ): Promise<{ stamp: Stamp | undefined; decision?: D }>;
  /** Counts it. */
  plain(principal: Principal): Promise<D>;
}

/** How often a key's `last_used_at` is brought up to date. */
const KEY_TOUCH_INTERVAL_MS = 60_000;
/** Keys whose last recorded use a replica remembers (more are forgotten, and touched again). */
const MAX_REMEMBERED_KEY_TOUCHES = 10_000;
/** Principals a replica keeps in memory. */
const MAX_CACHED_PRINCIPALS = 10_000;
/**
 * The one stamp behind every cached principal: bumped by each change a principal reflects (a
 * key revoked, an account's plan or limits changed). Such changes are rare; a bump makes every
 * replica re-read each key once.
 */
const PRINCIPALS_STAMP = 'principals';

/**
 * Accounts, their plans and their API keys in Postgres. The principal behind a key is cached
 * by each replica and re-read at once on every replica after a change (see Invalidations).
 */
export class AccountStore {
  /** When this replica last recorded each key's use. */
  private readonly keyTouches = new Map<string, number>();
  private readonly principals: StampedCache<Principal>;

  constructor(
    private readonly db: Database,
    private readonly invalidations: Invalidations = new LocalInvalidations(),
  ) {
    this.principals = new StampedCache(invalidations, MAX_CACHED_PRINCIPALS);
  }

  async createAccount(input: {
    name: string;
    plan: PlanName;
    planOverrides?: Partial<PlanLimits>;
  }): Promise<Account> {
    const id = 'acc_' + randomString(20, ID_ALPHABET);
    await this.db.query(
      'INSERT INTO accounts (id, name, plan, plan_overrides) VALUES ($1, $2, $3, $4)',
      [id, input.name, input.plan, input.planOverrides ?? {}],
    );
    return this.getAccount(id);
  }

  async listAccounts(): Promise<Account[]> {
    const { rows } = await this.db.query<AccountRow>(
      `${ACCOUNT_SELECT} ORDER BY a.created_at, a.id`,
    );
    return rows.map(toAccount);
  }

  async getAccount(accountId: string): Promise<Account> {
    const row = await oneRow<AccountRow>(
      this.db,
      `${ACCOUNT_SELECT} WHERE a.id = $1`,
      [accountId],
      () => new AppError('not_found', 'Account not found', { details: { accountId } }),
    );
    return toAccount(row);
  }

  /**
   * Changes an account's name, plan or custom values (which replace the old ones). Away from
   * enterprise, the custom values go. It applies to the account's next request, on every
   * gateway replica (limits are read with the key on each request).
   */
  async updateAccount(
    accountId: string,
    change: { name?: string; plan?: PlanName; planOverrides?: Partial<PlanLimits> },
  ): Promise<Account> {
    await this.db.transaction(async (tx) => {
      const { rows } = await tx.query<{ plan: PlanName }>(
        'SELECT plan FROM accounts WHERE id = $1 FOR UPDATE',
        [accountId],
      );
      const current = rows[0];
      if (current === undefined) {
        throw new AppError('not_found', 'Account not found', { details: { accountId } });
      }
      const plan = change.plan ?? current.plan;
      checkCustomLimits(plan, change.planOverrides);
      const overrides = plan === 'enterprise' ? change.planOverrides : {};
      await tx.query(
        `UPDATE accounts SET name = COALESCE($2, name), plan = $3,
                plan_overrides = COALESCE($4, plan_overrides)
          WHERE id = $1`,
        [accountId, change.name ?? null, plan, overrides ?? null],
      );
    });
    await this.invalidations.bump([PRINCIPALS_STAMP]);
    return this.getAccount(accountId);
  }

  /** Creates a key; the returned `key` value exists nowhere else afterwards. */
  async createKey(
    accountId: string,
    input: { name: string; scopes: Scope[] },
  ): Promise<ApiKeyInfo & { key: string }> {
    await this.getAccount(accountId);
    const generated = generateApiKey();
    const { rows } = await this.db.query<KeyRow>(
      `INSERT INTO api_keys (id, account_id, name, key_hash, key_prefix, scopes)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${KEY_COLUMNS}`,
      [
        'key_' + randomString(20, ID_ALPHABET),
        accountId,
        input.name,
        generated.hash,
        generated.prefix,
        input.scopes,
      ],
    );
    return { ...toKey(rows[0] as KeyRow), key: generated.value };
  }

  async listKeys(accountId: string): Promise<ApiKeyInfo[]> {
    await this.getAccount(accountId);
    const { rows } = await this.db.query<KeyRow>(
      `SELECT ${KEY_COLUMNS} FROM api_keys WHERE account_id = $1 ORDER BY created_at, id`,
      [accountId],
    );
    return rows.map(toKey);
  }

  async revokeKey(keyId: string): Promise<ApiKeyInfo> {
    const row = await oneRow<KeyRow>(
      this.db,
      `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1
       RETURNING ${KEY_COLUMNS}`,
      [keyId],
      () => new AppError('not_found', 'Key not found', { details: { keyId } }),
    );
    await this.invalidations.bump([PRINCIPALS_STAMP]);
    return toKey(row);
  }

  /**
   * The caller behind a key value, or undefined for an unknown or revoked key: from this
   * replica's cache while no change was made since, on any replica (one Redis round trip).
   * Unknown keys are not cached, so that guessing cannot fill the cache.
   */
  async findPrincipal(keyValue: string): Promise<Principal | undefined> {
    const keyHash = hashApiKey(keyValue);
    return this.principalOf(keyHash, await this.principals.readStamps([PRINCIPALS_STAMP]));
  }

  /**
   * The caller behind a key value, as `findPrincipal`, and its request counted (`count`): when
   * this replica holds the principal, the check of its stamp and the count are one round trip
   * (`count.guarded`, which counts only if the stamp is unchanged); otherwise, or when it
   * changed, the principal is read as `findPrincipal` does and then counted (`count.plain`).
   */
  async admit<D>(
    keyValue: string,
    count: PrincipalCount<D>,
  ): Promise<{ principal: Principal; decision: D } | undefined> {
    const keyHash = hashApiKey(keyValue);
    const held = this.principals.held(keyHash.toString('base64'));
    const checked =
      held === undefined
        ? undefined
        : await count.guarded(held.value, {
            key: PRINCIPALS_STAMP,
            expected: held.stamps[0] ?? null,
          });
    if (held === undefined || checked?.stamp === undefined) {
      const principal = await this.findPrincipal(keyValue);
      return principal && { principal, decision: await count.plain(principal) };
    }
    const read = { stamps: [checked.stamp], generation: held.generation };
    const { decision } = checked;
    const principal = await this.principalOf(keyHash, read);
    if (principal === undefined) return undefined;
    // Counted under the stamp it was read under, or (the caches started over meanwhile: a
    // Redis reconnect) under the same key and limit as the principal read again: not twice.
    const counted =
      decision !== undefined &&
      principal.keyId === held.value.keyId &&
      principal.limits.requestsPerMinute === held.value.limits.requestsPerMinute;
    return { principal, decision: counted ? decision : await count.plain(principal) };
  }

  /** The principal of a key's hash: cached under `read` if it is, else read and kept. */
  private async principalOf(keyHash: Buffer, read: StampRead): Promise<Principal | undefined> {
    const cacheId = keyHash.toString('base64');
    const cached = this.principals.lookup(cacheId, read);
    if (cached !== undefined) return cached;
    const principal = await this.readPrincipal(keyHash);
    if (principal !== undefined) this.principals.keep(cacheId, principal, read);
    return principal;
  }

  private async readPrincipal(keyHash: Buffer): Promise<Principal | undefined> {
    const { rows } = await this.db.query<
      PlanRow & { key_id: string; account_id: string; plan: PlanName; scopes: Scope[] }
    >(
      `SELECT k.id AS key_id, k.account_id, k.scopes, a.plan, a.plan_overrides, p.*
         FROM api_keys k
         JOIN accounts a ON a.id = k.account_id
         JOIN plans p ON p.name = a.plan
        WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
      [keyHash],
    );
    const row = rows[0];
    if (row === undefined) return undefined;
    return {
      keyId: row.key_id,
      accountId: row.account_id,
      plan: row.plan,
      scopes: row.scopes,
      limits: planLimitsFromRow(row),
    };
  }

  /**
   * Records use of a key, at most once a minute per key: this replica asks the database only
   * when it has not recorded the key's use itself within the minute.
   */
  async touchKey(keyId: string, now = Date.now()): Promise<void> {
    const last = this.keyTouches.get(keyId);
    if (last !== undefined && now - last < KEY_TOUCH_INTERVAL_MS) return;
    if (this.keyTouches.size >= MAX_REMEMBERED_KEY_TOUCHES) {
      for (const [id, at] of this.keyTouches) {
        if (now - at >= KEY_TOUCH_INTERVAL_MS) this.keyTouches.delete(id);
      }
      if (this.keyTouches.size >= MAX_REMEMBERED_KEY_TOUCHES) this.keyTouches.clear();
    }
    this.keyTouches.set(keyId, now);
    await this.db.query(
      `UPDATE api_keys SET last_used_at = now()
        WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
      [keyId],
    );
  }
}
