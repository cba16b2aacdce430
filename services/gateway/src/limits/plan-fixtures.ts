import type { PlanLimits } from './plans';

/**
 * The free and paid plans as the migrations seed them (spec 8.3), for unit tests that need a
 * principal's limits without a database; a test changes what it checks with a spread.
 */
export const FREE_PLAN: Readonly<PlanLimits> = {
  requestsPerMinute: 100,
  maxExecutionTimeoutS: 30,
  maxMemoryMb: 1024,
  maxFileSizeBytes: 10 * 1024 * 1024,
  maxFilesPerRequest: 100,
  maxEnvVars: 100,
  maxConcurrentSessions: 10,
  maxSessionTtlS: 86_400,
  resourceOverrides: false,
  maxOutputLogBytes: 1_048_576,
  egressDefault: 'allow',
};

export const PAID_PLAN: Readonly<PlanLimits> = {
  ...FREE_PLAN,
  requestsPerMinute: 1000,
  maxExecutionTimeoutS: 300,
  maxMemoryMb: 4096,
  maxFileSizeBytes: 50 * 1024 * 1024,
  maxFilesPerRequest: 1000,
  maxEnvVars: 500,
  maxConcurrentSessions: 100,
  maxSessionTtlS: 604_800,
  resourceOverrides: true,
  maxOutputLogBytes: 4 * 1_048_576,
};
