import type { Logger } from '@sandbox/logger';
import type { AgentPool } from '../nodes/agent-pool';
import type { Principal } from '../auth/principal';
import type { SessionAccess } from '../sessions/session-access';
import {
  newSnapshotId,
  type BlobRemoval,
  type SnapshotRecord,
  type SnapshotStore,
} from './snapshot-store';

/** A snapshot as the API shows it (ADR 44): the record's public fields, its id and time as text. */
export type SnapshotView = Pick<
  SnapshotRecord,
  'sessionId' | 'name' | 'sizeBytes' | 'processesKept'
> & {
  snapshotId: string;
  createdAt: string;
};

export interface SnapshotServiceDeps {
  store: SnapshotStore;
  access: Pick<SessionAccess, 'open'>;
  agents: Pick<AgentPool, 'forStored'>;
  logger: Logger;
}

/** Taking, listing and deleting snapshots: the database and the blob store kept in step. */
export class SnapshotService {
  constructor(private readonly deps: SnapshotServiceDeps) {}

  view(record: SnapshotRecord): SnapshotView {
    return {
      snapshotId: record.id,
      sessionId: record.sessionId,
      name: record.name,
      sizeBytes: record.sizeBytes,
      processesKept: record.processesKept,
      createdAt: record.createdAt.toISOString(),
    };
  }

  /**
   * A snapshot of the caller's session (woken first, like any request to it). The row is
   * pending while the node stores the files, within the plan's quota; any failure removes
   * the row and the blob.
   */
  async take(
    principal: Principal,
    sessionId: string,
    { processes = false, name }: { processes?: boolean | undefined; name?: string | undefined },
  ): Promise<SnapshotView> {
    const { store, logger } = this.deps;
    const { session, agent } = await this.deps.access.open(principal, sessionId);
    const quota = principal.limits;
    const record = await store.insert(
      {
        id: newSnapshotId(),
        accountId: principal.accountId,
        sessionId,
        name: name ?? null,
        nodeId: agent.nodeId,
        resourceLimits: session.resourceLimits,
        egress: session.egress,
        metadata: session.metadata,
      },
      quota,
    );
    try {
      const taken = await agent.snapshots.take(sessionId, record.id, processes);
      const ready = await store.markReady(
        record,
        { sizeBytes: taken.bytes, processesKept: taken.processesKept, storedIn: taken.storedIn },
        quota,
      );
      logger.info(
        { sessionId, snapshotId: record.id, bytes: taken.bytes, pausedMs: taken.pausedMs },
        'snapshot taken',
      );
      return this.view(ready);
    } catch (err) {
      // The row goes (if markReady has not removed it already), and the blob with it.
      const removal = await store
        .delete(principal.accountId, record.id, true)
        .catch(() => ({ snapshotId: record.id, nodeId: agent.nodeId, storedIn: '' }));
      await this.removeBlob(removal);
      throw err;
    }
  }

  async get(principal: Principal, snapshotId: string): Promise<SnapshotView> {
    return this.view(await this.deps.store.get(principal.accountId, snapshotId));
  }

  async list(
    principal: Principal,
    limit: number,
    offset: number,
  ): Promise<{ data: SnapshotView[]; total: number }> {
    const page = await this.deps.store.list({ accountId: principal.accountId, limit, offset });
    return { data: page.rows.map((record) => this.view(record)), total: page.total };
  }

  /** Gone for the API at once; its blob now, or by the sweeper if its node cannot say. */
  async delete(principal: Principal, snapshotId: string): Promise<void> {
    await this.removeBlob(await this.deps.store.delete(principal.accountId, snapshotId));
  }

  /** Removes the blobs of deleted rows (an account's deletion too); how many went. */
  async purge(): Promise<number> {
    let removed = 0;
    for (const removal of await this.deps.store.claimRemovals()) {
      if (await this.removeBlob(removal)) removed += 1;
    }
    return removed;
  }

  private async removeBlob({ snapshotId, nodeId, storedIn }: BlobRemoval): Promise<boolean> {
    try {
      const agent = this.deps.agents.forStored(nodeId, storedIn);
      await agent.snapshots.remove(snapshotId);
      await this.deps.store.removed(snapshotId);
      return true;
    } catch (err) {
      this.deps.logger.warn(
        { err, snapshotId, nodeId },
        'snapshot blob removal failed; will retry',
      );
      return false;
    }
  }
}
