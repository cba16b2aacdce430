import type { EgressDefault } from '@sandbox/contract';

export type PlanName = 'free' | 'paid' | 'enterprise';
export const PLAN_NAMES: readonly PlanName[] = ['free', 'paid', 'enterprise'];

/** Every per-plan number of spec section 8.3 (and the rate limit of 8.1). */
export interface PlanLimits {
  requestsPerMinute: number;
  maxExecutionTimeoutS: number;
  maxMemoryMb: number;
  maxFileSizeBytes: number;
  maxFilesPerRequest: number;
  maxEnvVars: number;
  maxConcurrentSessions: number;
  maxSessionTtlS: number;
  resourceOverrides: boolean;
  /** A run's output kept for replay at the most (the newest half at least). */
  maxOutputLogBytes: number;
  /** The egress default of a session whose create names none (ADR 30). */
  egressDefault: EgressDefault;
  /** Snapshots an account keeps at the most, and their stored bytes in all (ADR 44). */
  maxSnapshots: number;
  maxSnapshotBytes: number;
}

/** A `plans` row joined with an account's overrides (enterprise custom values). */
export interface PlanRow {
  requests_per_minute: number;
  max_execution_timeout_s: number;
  max_memory_mb: number;
  max_file_size_bytes: string | number;
  max_files_per_request: number;
  max_env_vars: number;
  max_concurrent_sessions: number;
  max_session_ttl_s: number;
  resource_overrides: boolean;
  max_output_log_bytes: string | number;
  egress_default: EgressDefault;
  max_snapshots: number;
  max_snapshot_bytes: string | number;
  plan_overrides: Partial<PlanLimits> | null;
}

export function planLimitsFromRow(row: PlanRow): PlanLimits {
  const base: PlanLimits = {
    requestsPerMinute: row.requests_per_minute,
    maxExecutionTimeoutS: row.max_execution_timeout_s,
    maxMemoryMb: row.max_memory_mb,
    maxFileSizeBytes: Number(row.max_file_size_bytes),
    maxFilesPerRequest: row.max_files_per_request,
    maxEnvVars: row.max_env_vars,
    maxConcurrentSessions: row.max_concurrent_sessions,
    maxSessionTtlS: row.max_session_ttl_s,
    resourceOverrides: row.resource_overrides,
    maxOutputLogBytes: Number(row.max_output_log_bytes),
    egressDefault: row.egress_default,
    maxSnapshots: row.max_snapshots,
    maxSnapshotBytes: Number(row.max_snapshot_bytes),
  };
  return { ...base, ...(row.plan_overrides ?? {}) };
}
