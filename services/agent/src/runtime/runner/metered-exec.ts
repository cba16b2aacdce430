import type { RunResult } from '@sandbox/contract';
import type { AgentConfig } from '@sandbox/config';
import type { Logger } from '@sandbox/logger';
import type { ContainerState } from '../docker/container-client';
import type { ByteSink, ExecSpec } from '../sandbox-runtime';
import type { WorkspaceStore } from '../storage/workspaces';
import { isFull, limitsExceeded, readLimitCounters } from './limit-watch';
import type { PackageInstaller } from './package-installer';
import type { RunnerClient } from './runner-client';
import { exec } from './runner-operations';

export interface MeteredExecDeps {
  runner: RunnerClient;
  installer: PackageInstaller;
  workspaces: WorkspaceStore;
  logger: Logger;
  /** Only a loop disk can be full on its own. */
  diskQuota: AgentConfig['diskQuota'];
}

/**
 * One run in the running `container`, and the limits it hit: the container's kernel counters
 * (OOM kills, refused forks) before and after, and a full disk.
 */
export async function meteredExec(
  deps: MeteredExecDeps,
  container: ContainerState,
  spec: ExecSpec,
  sink: ByteSink,
  signal: AbortSignal,
): Promise<RunResult> {
  const { runner, installer, workspaces, logger } = deps;
  const before = await readLimitCounters(container.pid);
  const outcome = await exec(
    { runner, installer, logger: logger.child({ sessionId: spec.sessionId }) },
    spec,
    sink,
    signal,
  );
  const after = await readLimitCounters(container.pid);
  const disk =
    deps.diskQuota === 'loop'
      ? await isFull(await workspaces.hostPath(spec.sessionId)).catch(() => undefined)
      : undefined;
  const exceeded = limitsExceeded(before, after, disk, {
    memoryMb: Math.round(container.memoryBytes / (1024 * 1024)),
    processes: container.pidsLimit,
  });
  if (exceeded.length > 0) logger.info({ sessionId: spec.sessionId, exceeded }, 'run hit limits');
  return { ...outcome, limitsExceeded: exceeded };
}
