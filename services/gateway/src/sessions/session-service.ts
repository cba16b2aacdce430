import { AppError } from '@sandbox/errors';
import type { Logger } from '@sandbox/logger';
import type { SandboxRequest } from '../agents/sandbox-request';
import type { AgentPool } from '../nodes/agent-pool';
import type { Principal } from '../auth/principal';
import type { SecretBox } from '../secrets/secret-box';
import { hashPreviewToken, newPreviewToken } from './preview-token';
import { newSessionId, previewUrl } from './session-id';
import {
  checkMetadata,
  resolveTtl,
  type ResourceLimitsInput,
  type SessionResourceLimits,
} from './session-limits';
import type { EgressInput } from './session-egress';
import { seededSettings, type SnapshotSeed, type SnapshotSeeds } from './session-seed';
import type { NewSession, PendingDestroy, SessionRecord } from './session-record';
import type { SessionStore } from './session-store';

export interface CreateSessionInput {
  ttl?: unknown;
  preview?: { private?: boolean | undefined } | undefined;
  metadata?: Record<string, unknown> | undefined;
  resourceLimits?: ResourceLimitsInput | undefined;
  egress?: EgressInput | undefined;
  /** The new session starts with this snapshot's files and, unless named, settings (ADR 44). */
  snapshotId?: string | undefined;
}

/** Spec 2.1 */
export interface SessionView {
  sessionId: string;
  expiresAt: string;
  previewUrl: string;
  createdAt: string;
  resourceLimits: SessionResourceLimits;
  /** Only in the creation response of a session with a private preview. */
  previewToken?: string;
}

/** Spec 2.3 */
export interface SessionInfoView {
  sessionId: string;
  createdAt: string;
  expiresAt: string;
  lastActive: string;
  state: 'active' | 'idle' | 'deep-sleep';
  /** An addition to spec 2.3: where the session's web apps are reached (as at creation). */
  previewUrl: string;
  filesCount: number;
  activeProcesses: number;
  metadata: Record<string, unknown>;
  /**
   * A private preview's X-Preview-Token, again, for the session's owner (ADR 41); absent for
   * sessions made before it was kept, or on a gateway without SECRETS_KEY.
   */
  previewToken?: string;
}

export interface SessionServiceDeps {
  store: SessionStore;
  agents: AgentPool;
  logger: Logger;
  previewDomain: string;
  previewUrlScheme: string;
  pidsLimit?: number;
  /** Seals private previews' tokens for their owners (ADR 41); absent without SECRETS_KEY. */
  box?: Pick<SecretBox, 'seal' | 'open' | 'canOpen'> | undefined;
  /** The snapshots sessions may be created from (absent: none, 404 snapshot_not_found). */
  snapshots?: SnapshotSeeds;
}

/** Creating, reading and deleting sessions: the database and the node kept in step. */
export class SessionService {
  private readonly createdListeners: Array<(session: SessionRecord) => void> = [];

  constructor(private readonly deps: SessionServiceDeps) {}

  /**
   * `listener` sees each new session once its row is written (its expiry is known), and again
   * once it is active: its idle delay counts from then, and a slow create may outlast it.
   */
  onCreated(listener: (session: SessionRecord) => void): void {
    this.createdListeners.push(listener);
  }

  view(record: SessionRecord): SessionView {
    return {
      sessionId: record.id,
      expiresAt: record.expiresAt.toISOString(),
      previewUrl: previewUrl(record.id, this.deps.previewUrlScheme, this.deps.previewDomain),
      createdAt: record.createdAt.toISOString(),
      resourceLimits: record.resourceLimits,
    };
  }

  async create(principal: Principal, input: CreateSessionInput): Promise<SessionView> {
    const ttlS = resolveTtl(input.ttl, principal.limits);
    const seed = await this.seedOf(principal, input.snapshotId);
    const { resourceLimits, metadata, egress } = seededSettings(input, seed, principal.limits);
    checkMetadata(metadata);

    const previewToken = input.preview?.private ? newPreviewToken() : undefined;
    // From a snapshot: on a node whose blob store holds it.
    const agent = await this.deps.agents.placeNow(
      { memoryMb: resourceLimits.memory, cpu: resourceLimits.cpu, diskMb: resourceLimits.disk },
      seed?.storedIn,
    );
    const record = await this.deps.store.insert({
      id: newSessionId(),
      accountId: principal.accountId,
      nodeId: agent.nodeId,
      metadata,
      resourceLimits,
      ttlS,
      maxConcurrent: principal.limits.maxConcurrentSessions,
      ...this.previewTokenColumns(previewToken),
      egress,
    });
    this.announce(record);
    try {
      await agent.createSandbox({
        ...this.sandboxRequest(record),
        ...(seed === undefined ? {} : { snapshotId: seed.id }),
      });
    } catch (err) {
      // Nothing half-made survives: the row is ended and the sweeper removes any remains.
      await this.deps.store.abandon(record.id);
      throw err;
    }
    await this.deps.store.markActive(record.id);
    this.announce(record);
    return this.createdView(record, previewToken);
  }

  /** What the node makes the session's sandbox with. */
  sandboxRequest(record: SessionRecord): SandboxRequest {
    const { resourceLimits: limits } = record;
    return {
      sessionId: record.id,
      accountId: record.accountId,
      limits: {
        memoryMb: limits.memory,
        cpu: limits.cpu,
        diskMb: limits.disk,
        pids: this.deps.pidsLimit ?? 0,
      },
      egress: record.egress,
    };
  }

  /** Tells the listeners of `onCreated` of a new session: once inserted, once active. */
  announce(record: SessionRecord): void {
    for (const listener of this.createdListeners) listener(record);
  }

  /** A create's answer: the session, active, with its preview's token if it has one. */
  createdView(record: SessionRecord, previewToken: string | undefined): SessionView {
    const view = this.view({ ...record, state: 'active' });
    return previewToken === undefined ? view : { ...view, previewToken };
  }

  private async seedOf(
    principal: Principal,
    snapshotId: string | undefined,
  ): Promise<SnapshotSeed | undefined> {
    if (snapshotId === undefined) return undefined;
    if (this.deps.snapshots === undefined) {
      throw new AppError('snapshot_not_found', 'Snapshot not found', { details: { snapshotId } });
    }
    return this.deps.snapshots.get(principal.accountId, snapshotId);
  }

  /** Session info with live counts from the node; reading does not count as activity. */
  async info(principal: Principal, sessionId: string): Promise<SessionInfoView> {
    const record = await this.deps.store.get(principal.accountId, sessionId);
    // A sleeping session has no sandbox to ask: its files were counted when it was saved.
    const sandbox =
      record.state === 'deep-sleep'
        ? { filesCount: record.sleepFilesCount ?? 0, activeProcesses: 0 }
        : await this.liveCounts(record);
    return {
      sessionId: record.id,
      createdAt: record.createdAt.toISOString(),
      expiresAt: record.expiresAt.toISOString(),
      lastActive: record.lastActiveAt.toISOString(),
      state: record.state === 'creating' ? 'active' : record.state,
      previewUrl: previewUrl(record.id, this.deps.previewUrlScheme, this.deps.previewDomain),
      filesCount: sandbox.filesCount,
      activeProcesses: sandbox.activeProcesses,
      metadata: record.metadata,
      ...this.previewTokenOf(record),
    };
  }

  /** A private preview's token as stored: its hash, and sealed when a key is configured. */
  previewTokenColumns(
    token: string | undefined,
  ): Pick<NewSession, 'previewTokenHash' | 'previewTokenSealed'> {
    if (token === undefined) return {};
    const sealed = this.deps.box?.seal(token);
    return {
      previewTokenHash: hashPreviewToken(token),
      ...(sealed && { previewTokenSealed: sealed }),
    };
  }

  /** The owner's preview token, when it was kept sealed under a key still configured. */
  private previewTokenOf(record: SessionRecord): { previewToken?: string } {
    const sealed = record.previewTokenSealed;
    const box = this.deps.box;
    if (sealed === null || box === undefined || !box.canOpen(sealed)) return {};
    try {
      return { previewToken: box.open(sealed) };
    } catch (err) {
      // A corrupt value: the session stays usable, its token is simply not shown again.
      this.deps.logger.error({ err, sessionId: record.id }, 'preview token cannot be opened');
      return {};
    }
  }

  private async liveCounts(
    record: SessionRecord,
  ): Promise<{ filesCount: number; activeProcesses: number }> {
    await this.deps.agents.recheck(record.nodeId);
    return this.deps.agents.forNode(record.nodeId).getSandbox(record.id);
  }

  /** Ends the session for the API at once and removes its sandbox now (or via the sweeper). */
  async delete(principal: Principal, sessionId: string): Promise<void> {
    await this.destroy(await this.deps.store.markDeleted(principal.accountId, sessionId));
  }

  /** Removes a sandbox and records it; failures are left for the sweeper to retry. */
  async destroy({ id: sessionId, nodeId, savedIn }: PendingDestroy): Promise<boolean> {
    try {
      await this.deps.agents.forDestroy(nodeId, savedIn).destroySandbox(sessionId);
      await this.deps.store.markDestroyed(sessionId);
      return true;
    } catch (err) {
      this.deps.logger.warn({ err, sessionId, nodeId }, 'sandbox removal failed; will retry');
      return false;
    }
  }
}
