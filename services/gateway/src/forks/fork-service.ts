import { performance } from 'node:perf_hooks';
import type { Logger } from '@sandbox/logger';
import type { Principal } from '../auth/principal';
import type { SessionAccess } from '../sessions/session-access';
import { ABSOLUTE_MAX_TTL_S } from '../sessions/session-limits';
import { newPreviewToken } from '../sessions/preview-token';
import type { NewSession, SessionRecord } from '../sessions/session-record';
import { newSessionId } from '../sessions/session-id';
import type { SessionService, SessionView } from '../sessions/session-service';
import type { SessionStore } from '../sessions/session-store';

export interface ForkInput {
  count?: number | undefined;
  processes?: boolean | undefined;
}

/** POST /v1/sessions/{id}/fork's answer. */
export interface ForkView {
  sessions: SessionView[];
  /** Whether the forks have the source's processes; false: its files only (ADR 43). */
  processesKept: boolean;
}

/** The source's own time to live (as it was created), within the plan's maximum now. */
function ttlOf(source: SessionRecord, principal: Principal): number {
  const ttlS = Math.round((source.expiresAt.getTime() - source.createdAt.getTime()) / 1000);
  return Math.max(1, Math.min(ttlS, principal.limits.maxSessionTtlS, ABSOLUTE_MAX_TTL_S));
}

/**
 * Forks of a session (ADR 43): new sessions of its account on its node, with its limits,
 * egress policy, metadata, preview privacy and time to live (counted from now), each a
 * copy-on-write copy of its files. A sleeping source is woken first (as any request wakes
 * it). All or none: within the concurrent-session limit (429, nothing made), and a node that
 * fails leaves no fork behind (the rows are ended; the sweeper removes any remains).
 */
export class ForkService {
  constructor(
    private readonly access: SessionAccess,
    private readonly store: SessionStore,
    private readonly sessions: SessionService,
    private readonly logger?: Logger,
  ) {}

  async fork(principal: Principal, sourceId: string, input: ForkInput): Promise<ForkView> {
    // Where a fork's time goes, logged with its answer (ms from the call's start).
    const from = performance.now();
    const at = () => Math.round(performance.now() - from);
    const { session: source, agent } = await this.access.open(principal, sourceId);
    const openedMs = at();
    const tokens = Array.from({ length: input.count ?? 1 }, () =>
      source.previewPrivate ? newPreviewToken() : undefined,
    );
    const ttlS = ttlOf(source, principal);
    const rows = tokens.map((token): NewSession => ({
      id: newSessionId(),
      accountId: principal.accountId,
      nodeId: source.nodeId,
      metadata: source.metadata,
      resourceLimits: source.resourceLimits,
      ttlS,
      maxConcurrent: principal.limits.maxConcurrentSessions,
      egress: source.egress,
      ...this.sessions.previewTokenColumns(token),
    }));
    const records = await this.store.insertAll(rows);
    const recordedMs = at();
    for (const record of records) this.sessions.announce(record);
    let processesKept: boolean;
    try {
      const requests = records.map((record) => this.sessions.sandboxRequest(record));
      ({ processesKept } = await agent.forkSandbox(source.id, requests, input.processes ?? true));
    } catch (err) {
      for (const record of records) await this.store.abandon(record.id);
      throw err;
    }
    const forkedMs = at();
    for (const record of records) {
      await this.store.markActive(record.id);
      this.sessions.announce(record);
    }
    this.logger?.info(
      { sessionId: sourceId, forks: records.length, openedMs, recordedMs, forkedMs, doneMs: at() },
      'session forked',
    );
    return {
      sessions: records.map((record, i) => this.sessions.createdView(record, tokens[i])),
      processesKept,
    };
  }
}
