import { z } from 'zod';
import { MAX_RUN_TIMEOUT_MS } from '@sandbox/contract';
import { AppError } from '@sandbox/errors';
import { checkStorableJson } from '../http/storable-json';
import type { PlanLimits } from '../limits/plans';

/** Spec 2.2: the applied limits of a session. */
export interface SessionResourceLimits {
  memory: number;
  cpu: number;
  timeout: number;
  disk: number;
}

export const DEFAULT_RESOURCE_LIMITS: Readonly<SessionResourceLimits> = Object.freeze({
  memory: 1024,
  cpu: 0.25,
  timeout: 30,
  disk: 1024,
});

export const DEFAULT_TTL_S = 86_400;
export const ABSOLUTE_MAX_TTL_S = 604_800;
export const METADATA_MAX_BYTES = 16 * 1024;
export const MAX_EXECUTION_TIMEOUT_S = MAX_RUN_TIMEOUT_MS / 1000;
const MIN_MEMORY_MB = 128;
const MIN_CPU = 0.1;
const MAX_CPU = 8;

export const resourceLimitsInput = z
  .object({
    memory: z.number().int().optional().describe('MB, 128 to the plan maximum (paid 4096)'),
    cpu: z.number().optional().describe('cores, 0.1 to 8'),
    timeout: z.number().int().optional().describe('default execution timeout, 1 to 300 s'),
    disk: z.unknown().optional().describe('not accepted: disk is reported, never set (400)'),
  })
  .strict()
  .describe('paid and enterprise plans only (403 forbidden on free)');

export type ResourceLimitsInput = z.output<typeof resourceLimitsInput>;

function outOfRange(field: string, value: number, min: number, max: number): AppError {
  return new AppError('invalid_request', `${field} must be between ${min} and ${max}`, {
    details: { field, value, min, max },
  });
}

/**
 * The TTL to apply, checked against the plan's maximum and the absolute maximum; any bad value
 * (also of the wrong type) is 400 with `details.field/value/max`.
 */
export function resolveTtl(ttl: unknown, plan: PlanLimits): number {
  const max = Math.min(plan.maxSessionTtlS, ABSOLUTE_MAX_TTL_S);
  const value = ttl === undefined ? Math.min(DEFAULT_TTL_S, max) : ttl;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw new AppError('invalid_request', `ttl must be an integer between 1 and ${max} seconds`, {
      details: { field: 'ttl', value, max },
    });
  }
  return value;
}

/** Applies defaults and the plan's bounds to requested overrides (paid plans only). */
export function resolveResourceLimits(
  input: ResourceLimitsInput | undefined,
  plan: PlanLimits,
): SessionResourceLimits {
  if (input === undefined) {
    return {
      ...DEFAULT_RESOURCE_LIMITS,
      memory: Math.min(DEFAULT_RESOURCE_LIMITS.memory, plan.maxMemoryMb),
      timeout: Math.min(DEFAULT_RESOURCE_LIMITS.timeout, plan.maxExecutionTimeoutS),
    };
  }
  if (!plan.resourceOverrides) {
    throw new AppError('forbidden', 'resourceLimits overrides need a paid plan', {
      details: { field: 'resourceLimits' },
    });
  }
  if (input.disk !== undefined) {
    throw new AppError('invalid_request', 'resourceLimits.disk cannot be set; it is reported', {
      details: { field: 'resourceLimits.disk' },
    });
  }
  const memory = input.memory ?? Math.min(DEFAULT_RESOURCE_LIMITS.memory, plan.maxMemoryMb);
  if (memory < MIN_MEMORY_MB || memory > plan.maxMemoryMb) {
    throw outOfRange('resourceLimits.memory', memory, MIN_MEMORY_MB, plan.maxMemoryMb);
  }
  const cpu = input.cpu ?? DEFAULT_RESOURCE_LIMITS.cpu;
  if (!Number.isFinite(cpu) || cpu < MIN_CPU || cpu > MAX_CPU) {
    throw outOfRange('resourceLimits.cpu', cpu, MIN_CPU, MAX_CPU);
  }
  const maxTimeout = Math.min(MAX_EXECUTION_TIMEOUT_S, plan.maxExecutionTimeoutS);
  const timeout = input.timeout ?? Math.min(DEFAULT_RESOURCE_LIMITS.timeout, maxTimeout);
  if (timeout < 1 || timeout > maxTimeout) {
    throw outOfRange('resourceLimits.timeout', timeout, 1, maxTimeout);
  }
  return { memory, cpu, timeout, disk: DEFAULT_RESOURCE_LIMITS.disk };
}

/** Metadata is storable JSON of at most 16 KB. */
export function checkMetadata(metadata: Record<string, unknown>): void {
  checkStorableJson(metadata, 'metadata');
  const size = Buffer.byteLength(JSON.stringify(metadata), 'utf8');
  if (size > METADATA_MAX_BYTES) {
    throw new AppError('invalid_request', 'metadata exceeds 16KB', {
      details: { field: 'metadata', size, max: METADATA_MAX_BYTES },
    });
  }
}
