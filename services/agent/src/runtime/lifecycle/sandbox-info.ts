import type { ContainerState } from '../docker/container-client';
import { containerName } from '../docker/docker-names';
import { userProcessesNow } from '../docker/kill-all';
import type { SandboxInfo } from '../sandbox-runtime';
import { countFiles } from '../storage/workspace-archive';
import type { LifecycleDeps } from './lifecycle-deps';

export function isRunning(info: ContainerState | undefined): info is ContainerState {
  return info !== undefined && info.running && !info.paused;
}

/** The session's container, found by its name. */
export function findSandbox(
  deps: Pick<LifecycleDeps, 'containers'>,
  sessionId: string,
): Promise<ContainerState | undefined> {
  return deps.containers.find(containerName(sessionId));
}

/** The state of the session's sandbox, without waking it. */
export async function inspectSandbox(deps: LifecycleDeps, sessionId: string): Promise<SandboxInfo> {
  const info = await findSandbox(deps, sessionId);
  if (info === undefined) {
    return { sessionId, containerId: '', status: 'missing', filesCount: 0, activeProcesses: 0 };
  }
  if (info.paused) {
    // Idle: the runner is frozen too; count from the host, without waking anything (the armed
    // shells, ADR 48, are no activity). gVisor's processes are not the host's: there, the
    // count its runner gave as it was frozen.
    const activeProcesses = info.ownKernel
      ? (deps.runners.lastStats(info.id)?.activeProcesses ?? 0)
      : (await userProcessesNow(await deps.containers.top(info.id), info.pid)).length;
    return {
      sessionId,
      containerId: info.id,
      status: 'paused',
      filesCount: await countFiles(await deps.workspaces.hostPath(sessionId)),
      activeProcesses,
    };
  }
  if (!info.running) {
    return {
      sessionId,
      containerId: info.id,
      status: 'missing',
      filesCount: 0,
      activeProcesses: 0,
    };
  }
  const stats = await deps.runners.stats(sessionId, info.id);
  return {
    sessionId,
    containerId: info.id,
    status: 'running',
    filesCount: stats.filesCount,
    activeProcesses: stats.activeProcesses,
  };
}
