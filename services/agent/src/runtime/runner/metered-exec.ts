import type { RunResult } from '@sandbox/contract';
import type { AgentConfig } from '@sandbox/config';
import type { Logger } from '@sandbox/logger';
import type { ContainerState } from '../docker/container-client';
import type { ByteSink, RunSpec } from '../sandbox-runtime';
import type { WorkspaceStore } from '../storage/workspaces';
import { isFull, limitsExceeded, type LimitLedger } from './limit-watch';
import type { Admission } from '../admission';
import type { ProcessLogs } from '../processes/process-logs';
import type { PackageInstaller } from '../packages/package-installer';
import type { RunnerClient } from './runner-client';
import { exec } from './runner-operations';

export interface MeteredExecDeps {
  runner: RunnerClient;
  installer: PackageInstaller;
  workspaces: WorkspaceStore;
  logger: Logger;
  logs: ProcessLogs;
  /** Only a loop disk can be full on its own. */
  diskQuota: AgentConfig['diskQuota'];
  ledger: LimitLedger;
  /** The node's admission of run starts. */
  starts?: Admission | undefined;
}

/**
 * One run in the running `container`, and the limits it hit: the container's kernel counters
 * (OOM kills, refused forks) before and after, and a full disk. What grew since the last
 * report (a background process of an earlier run) counts too.
 */
export async function meteredExec(
  deps: MeteredExecDeps,
  container: ContainerState,
  spec: RunSpec,
  sink: ByteSink,
): Promise<RunResult> {
  const { runner, installer, workspaces, logger, logs } = deps;
  const before = deps.ledger.baseline(container);
  const outcome = await exec(
    {
      runner,
      installer,
      logs,
      logger, // no child per run: its one line names the session itself
      starts: deps.starts,
    },
    spec,
    sink,
  );
  const after = deps.ledger.read(container);
  const disk =
    deps.diskQuota === 'loop'
      ? await workspaces
          .hostPath(spec.sessionId)
          .then(isFull)
          .catch(() => undefined)
      : undefined;
  const exceeded = limitsExceeded(deps.ledger.settle(container.id, before, after), after, disk, {
    memoryMb: Math.round(container.memoryBytes / (1024 * 1024)),
    processes: container.pidsLimit,
  });
  if (exceeded.length > 0) logger.info({ sessionId: spec.sessionId, exceeded }, 'run hit limits');
  return { ...outcome, limitsExceeded: exceeded };
}
