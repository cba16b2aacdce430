/** Names and labels of the Docker objects the agent owns, derived from the session id. */
const CONTAINER_PREFIX = 'sbx-';

/**
 * The prefix of a warm pool member's slot id: a member's container and workspace are named as
 * a session's would be, and take the session's names when it is claimed.
 */
export const POOL_SLOT_PREFIX = 'pool-';

export function containerName(sessionId: string): string {
  return `${CONTAINER_PREFIX}${sessionId}`;
}

/** The session (or pool slot) a container name belongs to; undefined for another name. */
export function slotOfContainerName(name: string): string | undefined {
  const bare = name.startsWith('/') ? name.slice(1) : name;
  return bare.startsWith(CONTAINER_PREFIX) ? bare.slice(CONTAINER_PREFIX.length) : undefined;
}

export function isPoolSlot(slot: string): boolean {
  return slot.startsWith(POOL_SLOT_PREFIX);
}

export function workspaceVolumeName(sessionId: string): string {
  return `sbx-ws-${sessionId}`;
}

export interface SandboxLabels {
  managed: string;
  session: string;
  account: string;
  node: string;
  /** Born in the warm pool: its name says whose it is now, its labels never will. */
  pool: string;
  /** The CPU group of its session's processes (`CpuSplitContainers`). */
  cpuGroup: string;
  /** The session's process limit of a gVisor sandbox (`OwnKernelContainers`). */
  pids: string;
  /** The link directory of its runner (`RunnerLinkContainers`). */
  runnerLink: string;
}

export function sandboxLabelKeys(prefix: string): SandboxLabels {
  return {
    managed: `${prefix}.managed`,
    session: `${prefix}.session`,
    account: `${prefix}.account`,
    node: `${prefix}.node`,
    pool: `${prefix}.pool`,
    cpuGroup: `${prefix}.cpu-group`,
    pids: `${prefix}.pids`,
    runnerLink: `${prefix}.runner-link`,
  };
}

/** The HTTP status of a failed Docker Engine API call (404 missing, 409 conflict...). */
export function statusCode(err: unknown): number | undefined {
  return typeof err === 'object' && err !== null && 'statusCode' in err
    ? (err as { statusCode?: number }).statusCode
    : undefined;
}
