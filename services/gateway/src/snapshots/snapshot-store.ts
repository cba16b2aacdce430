import { isSnapshotId, SNAPSHOT_ID_PREFIX, type EgressPolicy } from '@sandbox/contract';
import { AppError } from '@sandbox/errors';
import { randomString } from '../auth/api-keys';
import type { Database } from '../db/database';
import { newestFirstPage, type Page, type PageWindow } from '../db/newest-first-page';
import { oneRow } from '../db/one-row';
import type { SessionResourceLimits } from '../sessions/session-limits';

const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

export function newSnapshotId(): string {
  return SNAPSHOT_ID_PREFIX + randomString(24, ID_ALPHABET);
}

/** A snapshot as stored (ADR 44). */
export interface SnapshotRecord {
  id: string;
  accountId: string;
  sessionId: string;
  name: string | null;
  state: 'pending' | 'ready';
  sizeBytes: number;
  processesKept: boolean;
  nodeId: string;
  storedIn: string;
  resourceLimits: SessionResourceLimits;
  egress: EgressPolicy | null;
  metadata: Record<string, unknown>;
  createdAt: Date;
}

interface SnapshotRow {
  id: string;
  account_id: string;
  session_id: string;
  name: string | null;
  state: 'pending' | 'ready';
  size_bytes: string | number;
  processes_kept: boolean;
  node_id: string;
  stored_in: string;
  resource_limits: SessionResourceLimits;
  egress: EgressPolicy | null;
  metadata: Record<string, unknown>;
  created_at: Date;
}

const toRecord = (row: SnapshotRow): SnapshotRecord => ({
  id: row.id,
  accountId: row.account_id,
  sessionId: row.session_id,
  name: row.name,
  state: row.state,
  sizeBytes: Number(row.size_bytes),
  processesKept: row.processes_kept,
  nodeId: row.node_id,
  storedIn: row.stored_in,
  resourceLimits: row.resource_limits,
  egress: row.egress,
  metadata: row.metadata,
  createdAt: row.created_at,
});

export type NewSnapshot = Pick<
  SnapshotRecord,
  'id' | 'accountId' | 'sessionId' | 'name' | 'nodeId' | 'resourceLimits' | 'egress' | 'metadata'
>;

/** The plan's snapshot quota (ADR 44). */
export interface SnapshotQuota {
  maxSnapshots: number;
  maxSnapshotBytes: number;
}

/** A blob whose row is gone, for a node that reaches its store to remove. */
export interface BlobRemoval {
  snapshotId: string;
  nodeId: string;
  storedIn: string;
}

export const snapshotNotFound = (snapshotId: string): AppError =>
  new AppError('snapshot_not_found', 'Snapshot not found', { details: { snapshotId } });

/** A pending snapshot left by a gateway that died while its node stored it. */
const ABANDONED_AFTER_S = 15 * 60;
/** How long one replica holds a blob's removal before another may retry it. */
const REMOVAL_LEASE_S = 60;

/** Snapshots in Postgres; every read is scoped to the caller's account. */
export class SnapshotStore {
  constructor(private readonly db: Database) {}

  /** A pending row, or 429 snapshot_quota_exceeded (migration 0015's insert_snapshot). */
  async insert(snapshot: NewSnapshot, quota: SnapshotQuota): Promise<SnapshotRecord> {
    const row = await oneRow<SnapshotRow>(
      this.db,
      'SELECT * FROM insert_snapshot($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)',
      [
        snapshot.id,
        snapshot.accountId,
        snapshot.sessionId,
        snapshot.name,
        snapshot.nodeId,
        snapshot.resourceLimits,
        snapshot.egress,
        JSON.stringify(snapshot.metadata),
        quota.maxSnapshots,
        quota.maxSnapshotBytes,
      ],
      () => this.quotaExceeded(snapshot.accountId, quota),
    );
    return toRecord(row);
  }

  /** 429 with what the account keeps now, against its plan's numbers. */
  private async quotaExceeded(accountId: string, quota: SnapshotQuota): Promise<AppError> {
    const used = await this.usage(accountId);
    const byCount = used.count >= quota.maxSnapshots;
    return new AppError(
      'snapshot_quota_exceeded',
      byCount
        ? `The plan keeps at most ${quota.maxSnapshots} snapshots; delete one first`
        : `The plan keeps at most ${quota.maxSnapshotBytes} bytes of snapshots; delete some first`,
      {
        details: byCount
          ? { kind: 'count', limit: quota.maxSnapshots, used: used.count }
          : { kind: 'bytes', limit: quota.maxSnapshotBytes, used: used.bytes },
      },
    );
  }

  private async usage(accountId: string): Promise<{ count: number; bytes: number }> {
    const { rows } = await this.db.query<{ count: string; bytes: string }>(
      `SELECT count(*) AS count, coalesce(sum(size_bytes), 0) AS bytes
         FROM snapshots WHERE account_id = $1`,
      [accountId],
    );
    return { count: Number(rows[0]?.count ?? 0), bytes: Number(rows[0]?.bytes ?? 0) };
  }

  /**
   * The stored snapshot's size and store: the row is ready, unless its bytes take the
   * account past its plan's total; then the row goes (its blob queued for removal) and this
   * throws 429 snapshot_quota_exceeded.
   */
  async markReady(
    record: SnapshotRecord,
    stored: { sizeBytes: number; processesKept: boolean; storedIn: string },
    quota: SnapshotQuota,
  ): Promise<SnapshotRecord> {
    const ready = await this.db.transaction(async (tx) => {
      await tx.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [record.accountId]);
      const { rows: used } = await tx.query<{ bytes: string }>(
        `SELECT coalesce(sum(size_bytes), 0) AS bytes FROM snapshots
          WHERE account_id = $1 AND id <> $2`,
        [record.accountId, record.id],
      );
      if (Number(used[0]?.bytes ?? 0) + stored.sizeBytes > quota.maxSnapshotBytes) {
        await tx.query('DELETE FROM snapshots WHERE id = $1', [record.id]);
        return undefined;
      }
      const { rows } = await tx.query<SnapshotRow>(
        `UPDATE snapshots SET state = 'ready', size_bytes = $2, processes_kept = $3,
                stored_in = $4
          WHERE id = $1 RETURNING *`,
        [record.id, stored.sizeBytes, stored.processesKept, stored.storedIn],
      );
      return rows[0];
    });
    if (ready === undefined) {
      const used = await this.usage(record.accountId);
      throw new AppError(
        'snapshot_quota_exceeded',
        `This snapshot (${stored.sizeBytes} bytes) would take the account past its plan's ${quota.maxSnapshotBytes} bytes of snapshots; delete some first`,
        {
          details: {
            kind: 'bytes',
            limit: quota.maxSnapshotBytes,
            used: used.bytes,
            sizeBytes: stored.sizeBytes,
          },
        },
      );
    }
    return toRecord(ready);
  }

  /** The caller's ready snapshot; 404 snapshot_not_found otherwise (another account's too). */
  async get(accountId: string, snapshotId: string): Promise<SnapshotRecord> {
    if (!isSnapshotId(snapshotId)) throw snapshotNotFound(snapshotId);
    const row = await oneRow<SnapshotRow>(
      this.db,
      `SELECT * FROM snapshots WHERE id = $1 AND account_id = $2 AND state = 'ready'`,
      [snapshotId, accountId],
      () => snapshotNotFound(snapshotId),
    );
    return toRecord(row);
  }

  /** One page of the caller's ready snapshots, newest first. */
  list(window: PageWindow): Promise<Page<SnapshotRecord>> {
    return newestFirstPage(
      this.db,
      { select: '*', from: 'snapshots', where: "state = 'ready'" },
      window,
      toRecord,
    );
  }

  /**
   * Deletes a row (a pending one too, with `pending`): its blob is queued for removal by the
   * table's trigger. 404 snapshot_not_found when the caller has no such snapshot.
   */
  async delete(accountId: string, snapshotId: string, pending = false): Promise<BlobRemoval> {
    if (!isSnapshotId(snapshotId)) throw snapshotNotFound(snapshotId);
    const row = await oneRow<{ id: string; node_id: string; stored_in: string }>(
      this.db,
      `DELETE FROM snapshots WHERE id = $1 AND account_id = $2 ${pending ? '' : "AND state = 'ready'"}
        RETURNING id, node_id, stored_in`,
      [snapshotId, accountId],
      () => snapshotNotFound(snapshotId),
    );
    return { snapshotId: row.id, nodeId: row.node_id, storedIn: row.stored_in };
  }

  /**
   * Blobs to remove, each held for this replica for a lease; pending rows abandoned by a
   * gateway that died are deleted first (their blobs join the queue).
   */
  async claimRemovals(limit = 50): Promise<BlobRemoval[]> {
    await this.db.query(
      `DELETE FROM snapshots WHERE state = 'pending'
          AND created_at < now() - make_interval(secs => $1)`,
      [ABANDONED_AFTER_S],
    );
    const { rows } = await this.db.query<{
      snapshot_id: string;
      node_id: string;
      stored_in: string;
    }>(
      `UPDATE snapshot_blob_removals SET claimed_until = now() + make_interval(secs => $1)
        WHERE snapshot_id IN (
          SELECT snapshot_id FROM snapshot_blob_removals
           WHERE claimed_until IS NULL OR claimed_until < now()
           ORDER BY queued_at LIMIT $2 FOR UPDATE SKIP LOCKED)
        RETURNING snapshot_id, node_id, stored_in`,
      [REMOVAL_LEASE_S, limit],
    );
    return rows.map((row) => ({
      snapshotId: row.snapshot_id,
      nodeId: row.node_id,
      storedIn: row.stored_in,
    }));
  }

  /** The blob is gone: forgets its removal. */
  async removed(snapshotId: string): Promise<void> {
    await this.db.query('DELETE FROM snapshot_blob_removals WHERE snapshot_id = $1', [snapshotId]);
  }
}
