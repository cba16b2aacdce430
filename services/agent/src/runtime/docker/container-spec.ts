import { RUNNER_USER, SANDBOX_GID, SANDBOX_UID } from '@sandbox/contract';
import type { AgentConfig } from '@sandbox/config';
import type { SandboxLimits, SandboxSpec } from '../sandbox-runtime';
import type { ContainerCreateOptions, ContainerLimits } from './container-client';
import { containerName, sandboxLabelKeys } from './docker-names';

const MIB = 1024 * 1024;
const EXTRA_CA_IN_SANDBOX = '/etc/sandbox/extra-ca-certificates.pem';

/** What a sandbox container is made of, from the agent's configuration. */
export type ContainerConfig = Pick<
  AgentConfig,
  | 'sandboxImage'
  | 'sandboxNetwork'
  | 'sandboxRuntime'
  | 'nodeId'
  | 'labelPrefix'
  | 'extraCaCertsPath'
  | 'pidsLimit'
  | 'nofileLimit'
  | 'deepSleep'
  | 'deepSleepDiskMinBytes'
>;

/** The labels of a session's container and workspace: whose it is, and on which node. */
export function sandboxLabels(spec: SandboxSpec, config: ContainerConfig): Record<string, string> {
  const labels = sandboxLabelKeys(config.labelPrefix);
  return {
    [labels.managed]: 'true',
    [labels.session]: spec.sessionId,
    [labels.account]: spec.accountId,
    [labels.node]: config.nodeId,
  };
}

/** The labels of a warm pool member: this node's, and no session's (it has none yet). */
export function poolLabels(config: ContainerConfig): Record<string, string> {
  const labels = sandboxLabelKeys(config.labelPrefix);
  return { [labels.managed]: 'true', [labels.node]: config.nodeId, [labels.pool]: 'true' };
}

/** The limits of a sandbox's container that Docker can change while it runs. */
export function containerLimits(limits: SandboxLimits, config: ContainerConfig): ContainerLimits {
  return {
    memoryBytes: limits.memoryMb * MIB,
    nanoCpus: Math.round(limits.cpu * 1e9),
    pidsLimit: limits.pids > 0 ? limits.pids : config.pidsLimit,
  };
}

/**
 * What root may do in a sandbox: start the user's processes as the sandbox user and take every
 * capability from them (packages/runner/src/identity.ts). Only the runner, its spawner and the
 * keep-alive are root; user processes never hold any capability.
 */
export const RUNNER_CAPABILITIES = ['SETUID', 'SETGID', 'SETPCAP'];

/**
 * The hardened container of a session: the keep-alive and the runner as root with only
 * RUNNER_CAPABILITIES (out of the user's reach), user processes as the sandbox user with none,
 * a read-only root with small tmpfs mounts, the session's limits, and `workspace` (a Docker
 * bind) as /workspace.
 */
export function containerSpec(
  spec: SandboxSpec,
  config: ContainerConfig,
  workspace: string,
  labels: Record<string, string> = sandboxLabels(spec, config),
): ContainerCreateOptions {
  const env = ['HOME=/home/sandbox'];
  const binds = [workspace];
  if (config.extraCaCertsPath !== undefined) {
    binds.push(`${config.extraCaCertsPath}:${EXTRA_CA_IN_SANDBOX}:ro`);
    env.push(`NODE_EXTRA_CA_CERTS=${EXTRA_CA_IN_SANDBOX}`);
  }
  const limits = containerLimits(spec.limits, config);
  return {
    name: containerName(spec.sessionId),
    Image: config.sandboxImage,
    User: RUNNER_USER,
    WorkingDir: '/workspace',
    Env: env,
    Labels: labels,
    Cmd: ['sleep', 'infinity'],
    NetworkDisabled: false,
    HostConfig: {
      Init: true,
      Privileged: false,
      CapDrop: ['ALL'],
      CapAdd: RUNNER_CAPABILITIES,
      SecurityOpt: ['no-new-privileges:true'],
      ReadonlyRootfs: true,
      Tmpfs: {
        '/tmp': 'rw,nosuid,nodev,size=512m,mode=1777',
        '/home/sandbox': `rw,nosuid,nodev,size=256m,uid=${SANDBOX_UID},gid=${SANDBOX_GID},mode=0755`,
      },
      Binds: binds,
      Memory: limits.memoryBytes,
      MemorySwap: limits.memoryBytes,
      NanoCpus: limits.nanoCpus,
      PidsLimit: limits.pidsLimit,
      // Open files per process: plenty for real work, not enough to exhaust kernel memory.
      Ulimits: [{ Name: 'nofile', Soft: config.nofileLimit, Hard: config.nofileLimit }],
      IpcMode: 'private',
      NetworkMode: config.sandboxNetwork,
      RestartPolicy: { Name: 'no' },
      ...(config.sandboxRuntime === undefined ? {} : { Runtime: config.sandboxRuntime }),
    },
  };
}
