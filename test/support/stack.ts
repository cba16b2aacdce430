import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync } from 'node:fs';
import { readdir, readFile, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import {
  createDockerRuntime,
  removeNodeEgress,
  startAgent,
  type RunningAgent,
  type SandboxRuntime,
} from '@sandbox/agent';
import {
  loadAgentConfig,
  loadEdgeProxyConfig,
  loadGatewayConfig,
  type AgentConfig,
  type GatewayConfig,
} from '@sandbox/config';
import { startEdgeProxy, type RunningEdgeProxy } from '@sandbox/edge-proxy';
import { startGateway, type RunningGateway } from '@sandbox/gateway';
import { createLogger, type Logger } from '@sandbox/logger';
import { requiredEnv, SANDBOX_IMAGE } from './env';
import { closedPort } from './net';

export const docker = new Docker({ socketPath: '/var/run/docker.sock' });
const run = promisify(execFile);

/** Gateway settings for a test that runs the session sweeps itself (none runs on its own). */
export const MANUAL_SWEEPS = {
  SESSION_SWEEP_INTERVAL_S: '3600',
  SESSION_SWEEP_AT_DEADLINES: 'false',
} as const;

export interface StackOptions {
  /** Extra gateway environment, e.g. a short sweep interval. */
  gatewayEnv?: Record<string, string>;
  /** Extra agent environment, e.g. another disk quota mode. */
  agentEnv?: Record<string, string>;
  /** Gateway replicas sharing one database schema, Redis and agent. */
  replicas?: number;
  /** Also start an edge proxy for previews under `preview.test`. */
  edge?: boolean;
  /** Extra edge proxy environment. */
  edgeEnv?: Record<string, string>;
  /** Where every component's logs go (default: nowhere, unless TEST_LOG_LEVEL is set). */
  logger?: Logger;
  /** The agent's runtime (default: the real Docker runtime). */
  runtime?: (config: AgentConfig, logger: Logger) => SandboxRuntime;
}

export interface TestStack {
  /** `http://127.0.0.1:port` of the first replica. */
  url: string;
  urls: string[];
  gateways: RunningGateway[];
  agent: RunningAgent;
  edge: RunningEdgeProxy | undefined;
  agentConfig: AgentConfig;
  /** What every replica was started with (to start another one, e.g. after a stop). */
  gatewayConfig: GatewayConfig;
  adminToken: string;
  /** The shared secret of gateway, agent and edge proxy. */
  internalToken: string;
  nodeId: string;
  schema: string;
  logger: Logger;
  stop(): Promise<void>;
}

const random = (bytes = 6): string => randomBytes(bytes).toString('hex');

/** The labels of every container and volume a stack's agent made. */
export function nodeLabelFilter(nodeId: string): { label: string[] } {
  return { label: [`io.sandbox.node=${nodeId}`] };
}

/**
 * The container of a session now, running or not, found by the name the agent gives it (a
 * warm pool member keeps its pool labels when a session claims it: only its name is the
 * session's). Undefined when there is none.
 */
export async function sessionContainerNow(
  sessionId: string,
): Promise<Docker.ContainerInfo | undefined> {
  const [found] = await docker.listContainers({
    all: true,
    filters: { name: [`^/sbx-${sessionId}$`] },
  });
  return found;
}

/**
 * The container of a session, waiting up to 3 s for it: a create from the warm pool is
 * answered before the member takes the session's name (ADR 16). Undefined when none came.
 */
export async function sessionContainer(
  sessionId: string,
): Promise<Docker.ContainerInfo | undefined> {
  const deadline = Date.now() + 3000;
  for (;;) {
    const found = await sessionContainerNow(sessionId);
    if (found !== undefined || Date.now() > deadline) return found;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * The CPU limit of a session's processes, in CPUs: its CPU group's quota (ADR 20), where the
 * agent splits CPU; else Docker's limit on the container.
 */
export async function sessionCpuLimit(info: Docker.ContainerInspectInfo): Promise<number> {
  const labels = info.Config.Labels ?? {};
  const group = labels['io.sandbox.cpu-group'];
  if (group === undefined) return (info.HostConfig.NanoCpus ?? 0) / 1e9;
  const node = labels['io.sandbox.node'] ?? '';
  const quota = await readFile(
    `/sys/fs/cgroup/cpu/sandbox/io.sandbox.${node}/${group}/cpu.cfs_quota_us`,
    'utf8',
  );
  return Number(quota) / 100_000;
}

/** Whether this run's sandboxes are on gVisor (`SANDBOX_RUNTIME`, set by ./scripts/test). */
export const onGvisor = (process.env.SANDBOX_RUNTIME ?? '') !== '';

/**
 * The session's process limit of a sandbox container: Docker's pids limit, or on gVisor the
 * sandbox user's RLIMIT_NPROC, with the host's pids limit a bound on gVisor's own tasks.
 */
export function sessionProcessLimit(info: Docker.ContainerInspectInfo): number {
  if (!onGvisor) return info.HostConfig.PidsLimit ?? 0;
  const nproc = info.HostConfig.Ulimits?.find((u) => u.Name === 'nproc')?.Hard ?? 0;
  if ((info.HostConfig.PidsLimit ?? 0) <= nproc * 10) {
    throw new Error(`host pids limit ${info.HostConfig.PidsLimit} leaves gVisor no room`);
  }
  return nproc;
}

/** The containers of a node's sessions (not its warm pool's members). */
export async function sessionContainers(nodeId: string): Promise<Docker.ContainerInfo[]> {
  const all = await docker.listContainers({ all: true, filters: nodeLabelFilter(nodeId) });
  return all.filter((c) => c.Names.some((name) => name.startsWith('/sbx-ses_')));
}

/** A session container's processes as the host sees them: host pid and command line. */
export async function containerProcesses(
  nodeId: string,
  sessionId: string,
): Promise<Array<{ pid: number; args: string }>> {
  const container = (await sessionContainers(nodeId)).find((c) =>
    c.Names.some((name) => name.includes(sessionId)),
  );
  if (container === undefined) throw new Error(`no container for ${sessionId}`);
  const top = (await docker.getContainer(container.Id).top({ ps_args: '-eo pid,args' })) as {
    Processes?: string[][];
  };
  return (top.Processes ?? []).map(([pid = '0', ...args]) => ({
    pid: Number(pid),
    args: args.join(' '),
  }));
}

/** Where a test agent keeps its sessions' disks. */
const TEST_WORKSPACES = '/var/lib/sandbox-agent/test-workspaces';

export function testWorkspaceDir(nodeId: string): string {
  return `${TEST_WORKSPACES}/${nodeId}`;
}

/** Removes a node's CPU groups (empty once its containers are gone); rmdir, as cgroupfs wants. */
async function removeCpuGroups(root: string): Promise<void> {
  const groups = await readdir(root, { withFileTypes: true }).catch(() => []);
  for (const group of groups) {
    if (group.isDirectory()) await rmdir(join(root, group.name)).catch(() => undefined);
  }
  await rmdir(root).catch(() => undefined);
}

/** Removes every container, volume, disk and CPU group a test agent made. */
/** Unmounts (lazily) whatever is mounted below `dir`. */
async function unmountUnder(dir: string): Promise<void> {
  const mounts = (await readFile('/proc/self/mounts', 'utf8'))
    .split('\n')
    .map((line) => line.split(' ')[1] ?? '')
    .filter((mount) => mount.startsWith(`${dir}/`));
  for (const mount of mounts) await run('umount', ['-l', mount]).catch(() => undefined);
}

export async function removeNodeSandboxes(nodeId: string): Promise<void> {
  const filters = nodeLabelFilter(nodeId);
  // All at once: the engine removes them in parallel, and every test file ends here.
  const containers = await docker.listContainers({ all: true, filters });
  await Promise.all(
    containers.map(async (info) => {
      // A frozen gVisor sandbox cannot be killed: Docker would give up on it after 10 s.
      if (info.State === 'paused') {
        await docker
          .getContainer(info.Id)
          .unpause()
          .catch(() => undefined);
      }
      await docker
        .getContainer(info.Id)
        .remove({ force: true, v: true })
        .catch(() => undefined);
    }),
  );
  const { Volumes } = await docker.listVolumes({ filters });
  for (const volume of Volumes ?? []) {
    await docker
      .getVolume(volume.Name)
      .remove({ force: true })
      .catch(() => undefined);
  }
  const dir = testWorkspaceDir(nodeId);
  // Again while a disk is still being mounted: work the agent had under way when it stopped
  // (a slowed runtime's create, say) can mount after the first pass read the table.
  for (let pass = 1; ; pass += 1) {
    await unmountUnder(dir);
    try {
      await rm(dir, { recursive: true, force: true });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EBUSY' || pass === 5) throw err;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  await removeCpuGroups(`/sys/fs/cgroup/cpu/sandbox/io.sandbox.${nodeId}`);
  await rm(`${dir}-packages`, { recursive: true, force: true });
  await rm(`${dir}-blobs`, { recursive: true, force: true });
  await removeNodeEgress(nodeId);
}

/**
 * A test agent's environment: free loopback ports, its own node id, directories that
 * `removeNodeSandboxes` removes, the test image, the operator's extra CA bundle (here: the
 * npm proxy's), as ./scripts/up passes it, and the OCI runtime of `SANDBOX_RUNTIME` when set.
 */
export function testAgentEnv(nodeId: string, internalToken: string): Record<string, string> {
  // Searchable by others, as an agent makes the directories above its own: a remapped
  // sandbox root must pass it (ADR 32); an older run may have left it 0700.
  mkdirSync(TEST_WORKSPACES, { recursive: true, mode: 0o711 });
  chmodSync(TEST_WORKSPACES, 0o711);
  return {
    AGENT_PORT: '0',
    AGENT_PREVIEW_PORT: '0',
    NODE_ID: nodeId,
    INTERNAL_TOKEN: internalToken,
    SANDBOX_IMAGE,
    SANDBOX_WORKSPACE_DIR: testWorkspaceDir(nodeId),
    PACKAGE_CACHE_DIR: `${testWorkspaceDir(nodeId)}-packages`,
    BLOB_STORE_DIR: `${testWorkspaceDir(nodeId)}-blobs`,
    ...(process.env.NODE_EXTRA_CA_CERTS
      ? { SANDBOX_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS }
      : {}),
    // A pool grows only with the creates a test makes: idle time would fill it further, and
    // each member costs the CI machine a second or more of CPU (warm-pool tests set their own).
    SANDBOX_POOL_IDLE_MEMORY_PERCENT: '0',
    // ./scripts/test runs the suites once with Docker's runtime and once under gVisor.
    ...(process.env.SANDBOX_RUNTIME ? { SANDBOX_RUNTIME: process.env.SANDBOX_RUNTIME } : {}),
  };
}

/**
 * A real agent (Docker) and real gateway(s) (Postgres in their own schema, Redis), on free
 * loopback ports, with their own node id so that their containers can be found and removed.
 */
export async function startStack(options: StackOptions = {}): Promise<TestStack> {
  const databaseUrl = requiredEnv('TEST_DATABASE_URL');
  const redisUrl = requiredEnv('TEST_REDIS_URL');
  const nodeId = `test-${random()}`;
  const schema = `t_${random()}`;
  const internalToken = random(16);
  const adminToken = random(16);
  const logger =
    options.logger ?? createLogger({ name: 'test', level: process.env.TEST_LOG_LEVEL ?? 'silent' });

  const agentConfig = loadAgentConfig({
    ...testAgentEnv(nodeId, internalToken),
    // A warm pool of one, so that the tests' sessions come from it as in production. It keeps
    // its size: growing with each file's creates would make members no test asked for. Each
    // member left at the end was made for nothing, and CI pays it per file: on the CI machine
    // a bare `docker run` and `docker rm` alone take 1.2-1.4 s of CPU, before the runner starts.
    SANDBOX_POOL: '1:1024:0.25:1024',
    SANDBOX_POOL_MAX: '0',
    ...options.agentEnv,
  });
  const agent = await startAgent({
    config: agentConfig,
    logger,
    runtime:
      options.runtime?.(agentConfig, logger) ??
      createDockerRuntime({ config: agentConfig, logger }),
  });
  const gatewayConfig = loadGatewayConfig({
    GATEWAY_PORT: '0',
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    AGENT_NODES: `${nodeId}=${agent.address}`,
    INTERNAL_TOKEN: internalToken,
    ADMIN_TOKEN: adminToken,
    PREVIEW_DOMAIN: 'preview.test',
    SECRETS_KEY: randomBytes(32).toString('base64'),
    // Test receivers listen on loopback.
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    ...options.gatewayEnv,
  });
  const gateways: RunningGateway[] = [];
  for (let i = 0; i < (options.replicas ?? 1); i += 1) {
    gateways.push(await startGateway({ config: gatewayConfig, logger, schema }));
  }
  const urls = gateways.map((g) => g.url);
  const edge = options.edge
    ? await startEdgeProxy({
        config: loadEdgeProxyConfig({
          EDGE_PORT: '0',
          PREVIEW_DOMAIN: 'preview.test',
          GATEWAY_INTERNAL_URL: urls[0],
          INTERNAL_TOKEN: internalToken,
          ...options.edgeEnv,
        }),
        logger,
      })
    : undefined;
  return {
    url: urls[0] as string,
    urls,
    gateways,
    agent,
    edge,
    agentConfig,
    gatewayConfig,
    adminToken,
    internalToken,
    nodeId,
    schema,
    logger,
    async stop() {
      const db = gateways[0]?.db;
      await db?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
      await edge?.stop();
      for (const gateway of gateways) await gateway.stop();
      await agent.stop();
      await removeNodeSandboxes(nodeId);
    },
  };
}

/**
 * Another gateway on `stack`'s database whose agent is out of reach (a closed port), and its
 * Redis too unless `redis` (a gateway meeting a fault of its own).
 */
export async function startCutOffGateway(
  stack: Pick<TestStack, 'logger' | 'schema'>,
  { redis }: { redis: boolean },
): Promise<RunningGateway> {
  return startGateway({
    config: loadGatewayConfig({
      GATEWAY_PORT: '0',
      DATABASE_URL: requiredEnv('TEST_DATABASE_URL'),
      REDIS_URL: redis ? requiredEnv('TEST_REDIS_URL') : `redis://127.0.0.1:${await closedPort()}`,
      AGENT_NODES: `gone=127.0.0.1:${await closedPort()}`,
    }),
    logger: stack.logger,
    schema: stack.schema,
  });
}
