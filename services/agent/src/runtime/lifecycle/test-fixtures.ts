import type { ContainerConfig } from '../docker/container-spec';
import type { SandboxSpec } from '../sandbox-runtime';

/* What the in-memory doubles (in-memory-doubles.ts) and the tests over them share. */

/** Every step the doubles took, in order, e.g. `container.create ses_1`. */
export type Journal = string[];

/** A Docker Engine error, as dockerode rejects with it. */
export const dockerError = (statusCode: number) =>
  Object.assign(new Error(`docker answered ${statusCode}`), { statusCode });

export const testConfig: ContainerConfig = {
  sandboxImage: 'sandbox-runtime:test',
  sandboxNetwork: 'sandbox-net',
  sandboxRuntime: undefined,
  nodeId: 'node-1',
  labelPrefix: 'io.sandbox',
  extraCaCertsPath: undefined,
  pidsLimit: 256,
  nofileLimit: 1024,
  deepSleep: 'archive',
  deepSleepDiskMinBytes: 0,
};

export function sandboxSpec(sessionId: string, cpu = 1): SandboxSpec {
  return { sessionId, accountId: 'acc_1', limits: { memoryMb: 256, cpu, diskMb: 512, pids: 64 } };
}
