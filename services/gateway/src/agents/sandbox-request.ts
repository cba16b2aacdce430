import type { EgressPolicy } from '@sandbox/contract';
import type { ResourceLimits } from '@sandbox/proto';

/** What creating, restoring or forking a sandbox needs. */
export interface SandboxRequest {
  sessionId: string;
  accountId: string;
  limits: ResourceLimits;
  /** Where the sandbox may connect; absent or null: allow-all. */
  egress?: EgressPolicy | null;
  /** Create only: the workspace starts with this snapshot's files (ADR 44). */
  snapshotId?: string;
}

/** A request's egress policy as the wire has it (absent: allow-all). */
export function wireEgress(egress: EgressPolicy | null | undefined): { egress?: EgressPolicy } {
  return egress === undefined || egress === null ? {} : { egress };
}
