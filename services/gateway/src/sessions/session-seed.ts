import type { EgressPolicy } from '@sandbox/contract';
import type { PlanLimits } from '../limits/plans';
import { resolveEgress, type EgressInput } from './session-egress';
import {
  DEFAULT_RESOURCE_LIMITS,
  resolveResourceLimits,
  type ResourceLimitsInput,
  type SessionResourceLimits,
} from './session-limits';

/** What a session created from a snapshot starts from (ADR 44): the source's settings. */
export interface SnapshotSeed {
  id: string;
  /** The blob store holding it: the new session goes to a node that reaches it. */
  storedIn: string;
  resourceLimits: SessionResourceLimits;
  egress: EgressPolicy | null;
  metadata: Record<string, unknown>;
}

/** The caller's snapshot, or 404 snapshot_not_found (the snapshot store meets this). */
export interface SnapshotSeeds {
  get(accountId: string, snapshotId: string): Promise<SnapshotSeed>;
}

/** What a create asks for, where it may come from a snapshot. */
export interface SeededInput {
  metadata?: Record<string, unknown> | undefined;
  resourceLimits?: ResourceLimitsInput | undefined;
  egress?: EgressInput | undefined;
}

/**
 * A create's settings: each field the create names wins; otherwise a snapshot's source's
 * (its limits checked again against the plan now, which may have changed since), else the
 * defaults.
 */
export function seededSettings(
  input: SeededInput,
  seed: SnapshotSeed | undefined,
  plan: PlanLimits,
): {
  resourceLimits: SessionResourceLimits;
  metadata: Record<string, unknown>;
  egress: EgressPolicy | null;
} {
  return {
    resourceLimits: resolveResourceLimits(input.resourceLimits ?? inherited(seed, plan), plan),
    metadata: input.metadata ?? seed?.metadata ?? {},
    egress:
      input.egress === undefined && seed !== undefined
        ? seed.egress
        : resolveEgress(input.egress, plan.egressDefault),
  };
}

/** A source's limits as overrides, where the plan takes overrides and they differ. */
function inherited(
  seed: SnapshotSeed | undefined,
  plan: PlanLimits,
): ResourceLimitsInput | undefined {
  if (seed === undefined || !plan.resourceOverrides) return undefined;
  const { memory, cpu, timeout } = seed.resourceLimits;
  const defaults = DEFAULT_RESOURCE_LIMITS;
  if (memory === defaults.memory && cpu === defaults.cpu && timeout === defaults.timeout) {
    return undefined;
  }
  return {
    memory: Math.min(memory, plan.maxMemoryMb),
    cpu,
    timeout: Math.min(timeout, plan.maxExecutionTimeoutS),
  };
}
