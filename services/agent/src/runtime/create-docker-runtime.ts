import { chmodSync, mkdirSync } from 'node:fs';
import { availableParallelism, totalmem } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import type { AgentConfig } from '@sandbox/config';
import type { Logger } from '@sandbox/logger';
import { CachedContainers } from './docker/cached-containers';
import { freezerOfProcess } from './docker/cgroup-freezer';
import { ensureCheapCgroupMoves } from './docker/cgroup-moves';
import type { ContainerClient } from './docker/container-client';
import { CpuGroups } from './docker/cpu-groups';
import { CpuSplitContainers } from './docker/cpu-split-containers';
import { DockerodeContainerClient } from './docker/dockerode-container-client';
import { EngineWatch } from './docker/engine-watch';
import { OwnKernelContainers } from './docker/own-kernel-containers';
import { RunnerLinkContainers } from './docker/runner-link-containers';
import { SerialNetworkLeaves } from './docker/serial-network-leaves';
import { sandboxExtraCaBundle } from './docker/extra-ca';
import { openToSandboxRoot, SandboxHostIds, type EngineIdentity } from './docker/host-ids';
import { ensureHostQuotas } from './docker/host-quotas';
import { SandboxUserLimits } from './docker/sandbox-user-limits';
import { sandboxLabelKeys } from './docker/docker-names';
import { prepareHost } from './docker/host-setup';
import { DockerRuntime } from './docker-runtime';
import { SessionLocks } from './locks/session-locks';
import { closedByNode } from './network/closed-by-node';
import { DnsFilter, parseUpstreams } from './network/dns-filter';
import { EgressProxy, nodeResolver } from './network/egress-proxy';
import { SessionEgress } from './network/session-egress';
import { ContainerInstaller } from './packages/installer-container';
import { PackageInstaller } from './packages/package-installer';
import { Admission, RUN_START_WORDS } from './admission';
import { availableMemory } from './host-memory';
import { idleMembers, type IdleFillSettings } from './pool/idle-fill';
import { WarmPool } from './pool/warm-pool';
import type { WarmPoolDeps } from './pool/warm-pool-deps';
import { RequestLoad } from './request-load';
import { RunnerPool } from './runner/runner-pool';
import { createBlobStore } from './storage/blob-store';
import type { S3Credentials } from './storage/s3-object-store';
import { ProcessLogs } from './processes/process-logs';
import { SandboxSpecs } from './storage/sandbox-specs';
import { LoopWorkspaces, VolumeWorkspaces } from './storage/workspaces';

export interface DockerRuntimeOptions {
  config: AgentConfig;
  logger: Logger;
  docker?: Docker;
  /** The Docker calls of the lifecycle (default: through `docker`); tests pass their own. */
  containers?: ContainerClient;
  /** The S3 blob store's credentials (default: the AWS SDK's chain, e.g. AWS_ACCESS_KEY_ID). */
  blobCredentials?: S3Credentials;
}

/**
 * Containers whose session CPU limit binds user processes only (`CpuSplitContainers`), where
 * the configuration asks for it and the host allows it.
 */
function splitCpu(
  containers: ContainerClient,
  config: AgentConfig,
  logger: Logger,
  ids: SandboxHostIds,
): CpuSplitContainers | undefined {
  if (!config.cpuSplit) return undefined;
  const groups = CpuGroups.open({
    name: `${config.labelPrefix}.${config.nodeId}`,
    owner: ids,
    shares: config.sessionCpuShares,
    logger,
  });
  if (groups === undefined) return undefined;
  return new CpuSplitContainers(containers, groups, {
    label: sandboxLabelKeys(config.labelPrefix).cpuGroup,
    runnerNanoCpus: Math.round(config.runnerCpus * 1e9),
  });
}

/** Room in the host's quotas for containers besides sandboxes and pool members (installers). */
const OTHER_CONTAINERS = 32;

interface ContainerLayers {
  containers: ContainerClient;
  cache: CachedContainers | undefined;
  cpuSplit: CpuSplitContainers | undefined;
  links: RunnerLinkContainers;
  owner: () => { uid: number; gid: number };
}

/** The container client the runtime uses: Docker's, wrapped by each layer of the sandboxes' setup. */
function containerLayers(
  options: DockerRuntimeOptions,
  config: AgentConfig,
  docker: Docker,
  ids: SandboxHostIds,
): ContainerLayers {
  const { logger } = options;
  // Container state from memory while Docker's event stream says what changed.
  let cache: CachedContainers | undefined;
  let containers = options.containers;
  if (containers === undefined) {
    cache = new CachedContainers(
      new DockerodeContainerClient(docker, logger),
      () =>
        docker.getEvents({
          filters: { type: ['container'], label: [`${config.labelPrefix}.managed=true`] },
        }),
      logger,
    );
    containers = cache;
  }
  // No two containers leave the sandbox network at once: Docker 20.10's libnetwork deadlocks.
  containers = new SerialNetworkLeaves(containers, logger, async () => {
    return ((await docker.version()) as { Version?: string }).Version ?? '';
  });
  // Each sandbox's user namespace holds its share of the host's per-user limits (remapped).
  containers = new SandboxUserLimits(containers, () => ids.remapped, logger);
  const cpuSplit = splitCpu(containers, config, logger, ids);
  // Runners reach the agent over a socket of their own, not through dockerd (ADR 33).
  const owner = (): { uid: number; gid: number } => ({ uid: ids.rootUid, gid: ids.rootGid });
  const links = new RunnerLinkContainers(cpuSplit ?? containers, {
    root: join(config.workspaceDir, '.links'),
    label: sandboxLabelKeys(config.labelPrefix).runnerLink,
    owner,
  });
  if (!links.usable) {
    logger.warn('runners speak through dockerd: SANDBOX_WORKSPACE_DIR is too long for a socket');
  }
  containers = new OwnKernelContainers(links, sandboxLabelKeys(config.labelPrefix).pids);
  return { containers, cache, cpuSplit, links, owner };
}

/**
 * The memory a waiting pool member holds, measured (ADR 46): what the idle budget counts each
 * member as, and how many go back when memory runs low.
 */
const POOL_MEMBER_BYTES = 32 * 1024 * 1024;
/** How long the node must have served nothing before the pool grows past its demand. */
const IDLE_FILL_AFTER_MS = 5000;

/**
 * The pool's growth in idle time: `poolIdleMemoryPercent` of the node's memory, within
 * `poolMax`; given back below the memory placement keeps free plus that budget.
 */
function idleFill(config: AgentConfig): IdleFillSettings {
  const members = idleMembers(
    config.poolIdleMemoryPercent,
    totalmem(),
    POOL_MEMBER_BYTES,
    config.poolMax,
  );
  return {
    members,
    afterMs: IDLE_FILL_AFTER_MS,
    floorBytes: config.memoryReserveBytes + members * POOL_MEMBER_BYTES,
    memberBytes: POOL_MEMBER_BYTES,
    available: availableMemory,
  };
}

/** The warm pool the configuration asks for, where the workspaces allow one. */
function warmPool(
  config: AgentConfig,
  workspaces: LoopWorkspaces | VolumeWorkspaces,
  deps: Omit<
    WarmPoolDeps,
    'config' | 'workspaces' | 'shapes' | 'maxMembers' | 'freeze' | 'mapping' | 'idleFill'
  >,
  ids: SandboxHostIds,
): WarmPool | undefined {
  if (config.pool.length === 0) return undefined;
  if (!(workspaces instanceof LoopWorkspaces)) {
    deps.logger.warn('no warm pool: it needs SANDBOX_DISK_QUOTA=loop');
    return undefined;
  }
  return new WarmPool({
    ...deps,
    config,
    workspaces,
    shapes: config.pool,
    maxMembers: config.poolMax,
    freeze: config.poolFreeze,
    idleFill: idleFill(config),
    freezerOf: freezerOfProcess,
    mapping: () => `${ids.rootUid}:${ids.rootGid}`,
  });
}

/** Starts and stops the node's egress proxy and DNS filter (sessions with a policy use them). */
function egressProxies(
  config: AgentConfig,
  egress: SessionEgress,
  logger: Logger,
): {
  start: (gateway: string, dnsServers: string[]) => Promise<void>;
  stop: () => void;
} {
  let egressProxy: EgressProxy | undefined;
  let dnsFilter: DnsFilter | undefined;
  return {
    start: async (gateway, dnsServers) => {
      if (!config.egressFirewall || egressProxy !== undefined) return;
      egressProxy = new EgressProxy({
        policyFor: (ip) => egress.policyAt(ip),
        resolve: nodeResolver(config.egressDns),
        closedByNode: closedByNode(config.egressAllow),
        logger,
      });
      // The names a policy allows are resolved where the proxy resolves them.
      dnsFilter = new DnsFilter({
        policyFor: (ip) => egress.policyAt(ip),
        upstreams: parseUpstreams(config.egressDns.length > 0 ? config.egressDns : dnsServers),
        logger,
      });
      const ports = await egressProxy.listen(gateway);
      egress.useProxy({ gateway, ports, dns: await dnsFilter.listen(gateway) });
    },
    stop: () => {
      egressProxy?.close();
      dnsFilter?.close();
    },
  };
}

/** How often the engine is probed, and how long a probe may wait before the engine is wedged. */
const ENGINE_PROBE_MS = 10_000;
const ENGINE_WEDGED_AFTER_MS = 30_000;

/** A network inspect of the sandbox network needs libnetwork's controller lock. */
function engineWatch(docker: Docker, config: AgentConfig, logger: Logger): EngineWatch {
  return new EngineWatch({
    probe: () => docker.getNetwork(config.sandboxNetwork).inspect(),
    intervalMs: ENGINE_PROBE_MS,
    wedgedAfterMs: ENGINE_WEDGED_AFTER_MS,
    logger,
  });
}

/** Installs packages in throwaway installer containers into the node's cache (ADR 29). */
function packageInstaller(config: AgentConfig, docker: Docker, logger: Logger): PackageInstaller {
  return new PackageInstaller({
    cacheDir: config.packageCacheDir,
    npm: new ContainerInstaller(
      docker,
      {
        image: config.sandboxImage,
        network: config.installerNetwork,
        registry: new URL(config.npmRegistry),
        cacheVolume: `${config.labelPrefix}-npm-cache-${config.nodeId}`,
        cacheVolumeLabels: { [sandboxLabelKeys(config.labelPrefix).node]: config.nodeId },
        label: { key: `${config.labelPrefix}.installer`, value: config.nodeId },
        extraCaCertsPath: config.extraCaCertsPath,
        firewall: config.egressFirewall,
        nodeId: config.nodeId,
      },
      logger,
    ),
    logger,
  });
}

/** What the host needs before the first sandbox: the engine's ids, quotas, network, firewall. */
function hostPreparation(
  config: AgentConfig,
  layers: ContainerLayers,
  docker: Docker,
  ids: SandboxHostIds,
  logger: Logger,
): () => ReturnType<typeof prepareHost> {
  return async () => {
    ids.learn((await docker.info()) as EngineIdentity);
    if (ids.remapped) {
      logger.info({ sandboxRootUid: ids.rootUid }, 'the engine remaps user ids');
      // Every sandbox's root is one host uid, its user another: their quotas bound the node.
      const pooled = config.pool.length > 0 ? config.poolMax : 0;
      await ensureHostQuotas(config.maxSandboxes + pooled + OTHER_CONTAINERS, logger);
    }
    await openToSandboxRoot(config.workspaceDir, ids);
    // Each run moves itself into its session's CPU group: without waiting on the kernel.
    if (layers.cpuSplit !== undefined) await ensureCheapCgroupMoves({ logger });
    return prepareHost({ containers: layers.containers, config, logger });
  };
}

/** The workspace directory made, and the configuration with the sandboxes' CA bundle. */
function prepareConfig({ config, logger }: DockerRuntimeOptions): AgentConfig {
  // Directories made above it are searchable (a remapped sandbox root must pass them: see
  // openToSandboxRoot); the workspace directory itself is the agent's alone until then.
  mkdirSync(config.workspaceDir, { recursive: true, mode: 0o711 });
  chmodSync(config.workspaceDir, 0o700);
  return {
    ...config,
    extraCaCertsPath: sandboxExtraCaBundle(config.extraCaCertsPath, config.workspaceDir, (err) =>
      logger.warn({ err }, 'could not write the sandboxes CA bundle: passing the whole one'),
    ),
  };
}

/** The real runtime of an agent: Docker at `config.dockerSocket`, stores from `config`. */
export function createDockerRuntime(options: DockerRuntimeOptions): DockerRuntime {
  const { logger } = options;
  const config = prepareConfig(options);
  const docker = options.docker ?? new Docker({ socketPath: config.dockerSocket });
  // The sandbox user's ids on the host: learned from the engine before the first sandbox.
  const ids = new SandboxHostIds();
  const layers = containerLayers(options, config, docker, ids);
  const { containers, links, owner } = layers;
  const runners = new RunnerPool(docker, logger, {
    label: sandboxLabelKeys(config.labelPrefix).runnerLink,
    linkDir: (label) => links.linkDir(label),
    owner,
  });
  const workspaces =
    config.diskQuota === 'loop'
      ? new LoopWorkspaces(config.workspaceDir, logger, ids)
      : new VolumeWorkspaces(docker, ids);
  const load = new RequestLoad();
  const egress = new SessionEgress(logger, config.nodeId, config.egressFirewall);
  const proxies = egressProxies(config, egress, logger);
  const coldStarts = new Admission(config.coldStarts);
  const pool = warmPool(
    config,
    workspaces,
    {
      containers,
      runners,
      logger,
      busy: () => load.busy(),
      quietFor: (ms) => load.quietFor(ms),
      // A member made is a cold start timed: what admission judges creates by, at first.
      onMemberMade: (ms) => coldStarts.learn(ms),
    },
    ids,
  );
  return new DockerRuntime({
    config,
    logger,
    containers,
    engine: engineWatch(docker, config, logger),
    coldStarts,
    runStarts: new Admission(config.runStarts, RUN_START_WORDS),
    prepareHost: async () => {
      // Before any disk is made: where images go (ADR 43), and disks a crash left frozen.
      if (workspaces instanceof LoopWorkspaces) {
        await workspaces.prepare(
          config.diskStore === 'reflink' ? { sizeGb: config.diskStoreGb } : undefined,
        );
      }
      return hostPreparation(config, layers, docker, ids, logger)();
    },
    runners,
    pool,
    load,
    cache: layers.cache,
    cpuSplit: layers.cpuSplit,
    links,
    blobs: createBlobStore(config, options.blobCredentials, ids),
    specs: new SandboxSpecs(join(config.workspaceDir, '.specs')),
    logs: new ProcessLogs(join(config.workspaceDir, '.logs'), logger),
    locks: new SessionLocks(),
    egress,
    startEgressProxy: proxies.start,
    stopEgressProxy: proxies.stop,
    hostCpus: availableParallelism(),
    installer: packageInstaller(config, docker, logger),
    workspaces,
  });
}
