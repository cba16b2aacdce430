import type { EgressPolicy } from '@sandbox/contract';
import type { SessionResourceLimits } from './session-limits';

export type SessionState = 'creating' | 'active' | 'idle' | 'deep-sleep';

export interface SessionRecord {
  id: string;
  accountId: string;
  nodeId: string;
  state: SessionState;
  metadata: Record<string, unknown>;
  resourceLimits: SessionResourceLimits;
  createdAt: Date;
  expiresAt: Date;
  lastActiveAt: Date;
  /** Files saved when the session went to deep sleep. */
  sleepFilesCount: number | null;
  /** Its preview needs the X-Preview-Token given at creation. */
  previewPrivate: boolean;
  /**
   * That token sealed with SECRETS_KEY, for its owner to read again (ADR 41); null for a
   * public preview, and for sessions made before it was kept or without a SECRETS_KEY.
   */
  previewTokenSealed: string | null;
  /** In deep sleep: where its workspace was saved (a blob store's id, or its node's own). */
  savedIn: string | null;
  /** In deep sleep: the node confirmed the workspace saved and the sandbox removed. */
  sleepConfirmed: boolean;
  /** Where its sandbox may connect; null: allow-all. */
  egress: EgressPolicy | null;
}

/** A row of `sessions` as COLUMNS reads it. */
export interface SessionRow {
  id: string;
  account_id: string;
  node_id: string;
  state: SessionState;
  metadata: Record<string, unknown>;
  resource_limits: SessionResourceLimits;
  created_at: Date;
  expires_at: Date;
  last_active_at: Date;
  sleep_files_count: number | null;
  preview_private: boolean;
  preview_token_sealed: string | null;
  saved_in: string | null;
  sleep_confirmed: boolean;
  egress: EgressPolicy | null;
}

export const COLUMNS =
  'id, account_id, node_id, state, metadata, resource_limits, created_at, expires_at, last_active_at, sleep_files_count, (preview_token_hash IS NOT NULL) AS preview_private, preview_token_sealed, saved_in, (sleep_confirmed_at IS NOT NULL) AS sleep_confirmed, egress';

/** A session the API can see: not deleted, not expired, not half-created. */
export const LIVE = `deleted_at IS NULL AND expires_at > now() AND state <> 'creating'`;

/** A deleted session's store, for its removal: only a confirmed sleeper's. */
export const SAVED_IN = 'CASE WHEN sleep_confirmed_at IS NOT NULL THEN saved_in END AS saved_in';

export const toRecord = (row: SessionRow): SessionRecord => ({
  id: row.id,
  accountId: row.account_id,
  nodeId: row.node_id,
  state: row.state,
  metadata: row.metadata,
  resourceLimits: row.resource_limits,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  lastActiveAt: row.last_active_at,
  sleepFilesCount: row.sleep_files_count,
  previewPrivate: row.preview_private,
  previewTokenSealed: row.preview_token_sealed,
  savedIn: row.saved_in,
  sleepConfirmed: row.sleep_confirmed,
  egress: row.egress,
});

export interface NewSession {
  id: string;
  accountId: string;
  nodeId: string;
  metadata: Record<string, unknown>;
  resourceLimits: SessionResourceLimits;
  ttlS: number;
  maxConcurrent: number;
  /** sha256 of the preview token of a private preview. */
  previewTokenHash?: Buffer;
  /** That token sealed with SECRETS_KEY (ADR 41). */
  previewTokenSealed?: string;
  /** Its egress policy; absent or null: allow-all. */
  egress?: EgressPolicy | null;
}

export interface PendingDestroy {
  id: string;
  nodeId: string;
  /** A confirmed sleeper's store (another node naming a shared one can remove its archive). */
  savedIn?: string | null;
}
