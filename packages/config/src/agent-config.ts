import { availableParallelism, hostname, totalmem } from 'node:os';
import { z } from 'zod';
import { intVar, listVar, optionalString, serviceConfig, serviceVars } from './env-schema';

/** Where deep-sleeping sessions' workspaces go: a local directory, or an S3(-compatible) bucket. */
export type BlobStoreSettings =
  | { kind: 'local' }
  | {
      kind: 's3';
      bucket: string;
      /** Prepended to every object key: empty, or ending with `/`. */
      prefix: string;
      region: string;
      /** An S3-compatible service's URL; absent for AWS itself. */
      endpoint: string | undefined;
      forcePathStyle: boolean;
    };

interface BlobStoreEnv {
  BLOB_STORE: 'local' | 's3';
  BLOB_STORE_S3_BUCKET?: string | undefined;
  BLOB_STORE_S3_PREFIX: string;
  BLOB_STORE_S3_REGION: string;
  BLOB_STORE_S3_ENDPOINT?: string | undefined;
  BLOB_STORE_S3_FORCE_PATH_STYLE: 'true' | 'false';
}

/** The blob store settings; `s3` without a bucket is reported as an issue of the schema. */
function blobStoreSettings(env: BlobStoreEnv, ctx: z.RefinementCtx): BlobStoreSettings {
  if (env.BLOB_STORE === 'local') return { kind: 'local' };
  if (env.BLOB_STORE_S3_BUCKET === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['BLOB_STORE_S3_BUCKET'],
      message: 'required when BLOB_STORE=s3',
    });
    return z.NEVER;
  }
  return {
    kind: 's3',
    bucket: env.BLOB_STORE_S3_BUCKET,
    prefix: env.BLOB_STORE_S3_PREFIX,
    region: env.BLOB_STORE_S3_REGION,
    endpoint: env.BLOB_STORE_S3_ENDPOINT,
    forcePathStyle: env.BLOB_STORE_S3_FORCE_PATH_STYLE === 'true',
  };
}

/** One shape of the warm pool: `size:memoryMb:cpu:diskMb`, e.g. `4:1024:0.25:1024`. */
export interface PoolShapeSetting {
  size: number;
  memoryMb: number;
  cpu: number;
  diskMb: number;
}

const POOL_SHAPE = /^(\d{1,3}):(\d{1,6}):(\d{1,3}(?:\.\d{1,3})?):(\d{1,7})$/;

/** `SANDBOX_POOL`: comma-separated shapes; empty or `0` for no pool. */
const poolSetting = z
  .string()
  .default('16:1024:0.25:1024')
  .transform((text, ctx): PoolShapeSetting[] => {
    const trimmed = text.trim();
    if (trimmed === '' || trimmed === '0') return [];
    const shapes: PoolShapeSetting[] = [];
    for (const part of trimmed.split(',')) {
      const match = POOL_SHAPE.exec(part.trim());
      const shape = match && {
        size: Number(match[1]),
        memoryMb: Number(match[2]),
        cpu: Number(match[3]),
        diskMb: Number(match[4]),
      };
      if (!shape || shape.memoryMb < 6 || shape.cpu <= 0 || shape.diskMb < 16) {
        ctx.addIssue({
          code: 'custom',
          message: `"${part}" is not size:memoryMb:cpu:diskMb (e.g. 4:1024:0.25:1024)`,
        });
        return z.NEVER;
      }
      if (shape.size > 0) shapes.push(shape);
    }
    return shapes;
  });

const agentVars = z.object({
  AGENT_HOST: z.string().default('127.0.0.1'),
  AGENT_PORT: intVar(50051, 0, 65535),
  AGENT_PREVIEW_PORT: intVar(50052, 0, 65535),
  AGENT_ADVERTISE_HOST: optionalString(),
  NODE_ID: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,62}$/)
    .optional(),
  INTERNAL_TOKEN: optionalString(),
  DOCKER_SOCKET: z.string().default('/var/run/docker.sock'),
  SANDBOX_IMAGE: z.string().default('sandbox-runtime:latest'),
  SANDBOX_NETWORK: z.string().default('sandbox-net'),
  SANDBOX_RUNTIME: optionalString(),
  SANDBOX_PIDS_LIMIT: intVar(256, 16, 65536),
  SANDBOX_MAX_RUNS: intVar(32, 1, 1024),
  SANDBOX_NOFILE_LIMIT: intVar(8192, 256, 1_048_576),
  SANDBOX_CPU_SPLIT: z.enum(['on', 'off']).default('on'),
  SANDBOX_RUNNER_CPUS: z.coerce.number().min(0.05).max(64).default(1),
  SANDBOX_CPU_SHARES: z.coerce.number().int().min(2).max(262_144).optional(),
  SANDBOX_EXTRA_CA_CERTS: optionalString(),
  SANDBOX_LABEL_PREFIX: z.string().default('io.sandbox'),
  SANDBOX_DISK_QUOTA: z.enum(['loop', 'none']).default('loop'),
  SANDBOX_DISK_STORE: z.enum(['reflink', 'plain']).default('reflink'),
  SANDBOX_DISK_STORE_GB: intVar(256, 1, 16_384),
  SANDBOX_EGRESS_FIREWALL: z.enum(['on', 'off']).default('on'),
  SANDBOX_POOL: poolSetting,
  SANDBOX_POOL_MAX: intVar(64, 0, 10_000),
  SANDBOX_POOL_FREEZE: z.enum(['on', 'off']).default('on'),
  SANDBOX_POOL_IDLE_MEMORY_PERCENT: intVar(10, 0, 50),
  SANDBOX_COLD_STARTS: intVar(0, 0, 64),
  SANDBOX_COLD_START_QUEUE: intVar(32, 0, 10_000),
  SANDBOX_RUN_STARTS: intVar(0, 0, 10_000),
  SANDBOX_RUN_START_QUEUE: intVar(512, 0, 100_000),
  PACKAGE_CACHE_DIR: z.string().default('/var/lib/sandbox-agent/packages'),
  BLOB_STORE: z.enum(['local', 's3']).default('local'),
  SANDBOX_DEEP_SLEEP: z.enum(['archive', 'disk']).default('archive'),
  SANDBOX_DEEP_SLEEP_DISK_MIN_MB: intVar(128, 0, 1_048_576),
  BLOB_STORE_DIR: z.string().default('/var/lib/sandbox-agent/blobs'),
  BLOB_STORE_S3_BUCKET: optionalString(),
  BLOB_STORE_S3_PREFIX: z
    .string()
    .regex(/^(?!\/)(.*\/)?$/, 'must be empty or end with "/", and not start with "/"')
    .default('sandbox-workspaces/'),
  BLOB_STORE_S3_REGION: z.string().trim().min(1).default('us-east-1'),
  BLOB_STORE_S3_ENDPOINT: optionalString().pipe(z.url({ protocol: /^https?$/ }).optional()),
  BLOB_STORE_S3_FORCE_PATH_STYLE: z.enum(['true', 'false']).default('false'),
  NPM_REGISTRY: z.url({ protocol: /^https?$/ }).default('https://registry.npmjs.org/'),
  PACKAGE_INSTALLER_NETWORK: z.string().default('sandbox-installer'),
  SANDBOX_EGRESS_ALLOW: listVar(z.string()),
  SANDBOX_EGRESS_DNS: listVar(z.string()),
  SANDBOX_WORKSPACE_DIR: z.string().default('/var/lib/sandbox-agent/workspaces'),
  AGENT_RECONCILE_INTERVAL_S: intVar(60, 1),
  AGENT_MAX_SANDBOXES: intVar(0, 0, 100_000),
  AGENT_MEMORY_RESERVE_MB: intVar(512, 0, 1_048_576),
  AGENT_GATEWAY_URL: optionalString().pipe(z.url({ protocol: /^https?$/ }).optional()),
  AGENT_ANNOUNCE_INTERVAL_S: intVar(30, 1, 3600),
  ...serviceVars,
});

type AgentEnv = z.output<typeof agentVars>;

/** Where workspaces, the package cache and deep-sleeping sessions go. */
function storageSettings(env: AgentEnv, ctx: z.RefinementCtx) {
  return {
    /** `loop`: each workspace is its own ext4 filesystem of the session's disk size. */
    diskQuota: env.SANDBOX_DISK_QUOTA,
    /**
     * Where loop disks' images live (ADR 43). `reflink`: on an XFS filesystem (reflink=1) held
     * in a sparse file of `diskStoreGb` under the workspace directory, so that a fork's disk is
     * a copy-on-write clone; `plain`: beside the mounts, and a fork copies the whole image.
     */
    diskStore: env.SANDBOX_DISK_STORE,
    diskStoreGb: env.SANDBOX_DISK_STORE_GB,
    workspaceDir: env.SANDBOX_WORKSPACE_DIR,
    /** The node's package cache: npm's cache and installed bundles, shared by all sessions. */
    packageCacheDir: env.PACKAGE_CACHE_DIR,
    /** Where deep-sleeping sessions' workspaces are kept. */
    blobStore: blobStoreSettings(env, ctx),
    /**
     * `disk`: a deep sleep keeps the session's own disk on the node (the container goes), so a
     * wake is a new container on it whatever the workspace's size; only with `loop` disks and
     * the local blob store (else as `archive`: the workspace archived to the blob store).
     */
    deepSleep:
      env.SANDBOX_DEEP_SLEEP === 'disk' &&
      env.SANDBOX_DISK_QUOTA === 'loop' &&
      env.BLOB_STORE === 'local'
        ? ('disk' as const)
        : ('archive' as const),
    deepSleepDiskMinBytes: env.SANDBOX_DEEP_SLEEP_DISK_MIN_MB * 1024 * 1024,
    /** The local blob store's directory; with `s3`, where archives are staged on their way. */
    blobStoreDir: env.BLOB_STORE_DIR,
  };
}

/** What sandboxes and installers may reach. */
function networkSettings(env: AgentEnv) {
  return {
    /** The registry automatic installs use: the only place their installer containers reach. */
    npmRegistry: env.NPM_REGISTRY,
    /** The internal Docker network of installer containers (made if missing). */
    installerNetwork: env.PACKAGE_INSTALLER_NETWORK,
    /** `on`: sandboxes reach the internet only: not this host, private ranges or metadata. */
    egressFirewall: env.SANDBOX_EGRESS_FIREWALL === 'on',
    /** CIDRs sandboxes may reach although private (e.g. a registry mirror). */
    egressAllow: env.SANDBOX_EGRESS_ALLOW,
    /**
     * Where the egress proxy resolves the names of domain rules (`ip` or `ip:port`, comma-
     * separated); empty: as the node's own programs do.
     */
    egressDns: env.SANDBOX_EGRESS_DNS,
  };
}

/** The warm pool, and how many creates and runs start at once. */
function poolSettings(env: AgentEnv) {
  return {
    /** The warm pool: sandboxes of these shapes made ahead of demand (needs `loop` disks). */
    pool: env.SANDBOX_POOL,
    /**
     * Pool members held at most, all shapes together: each shape grows past its size towards
     * the creates of its last minute, within this (never below the shapes' sizes).
     */
    poolMax: Math.max(
      env.SANDBOX_POOL_MAX,
      env.SANDBOX_POOL.reduce((sum, shape) => sum + shape.size, 0),
    ),
    /** `on`: pool members wait frozen (no CPU); a claim thaws them (ADR 36). */
    poolFreeze: env.SANDBOX_POOL_FREEZE === 'on',
    /**
     * The share of the node's memory (%) the pool may fill in idle time, past what its creates
     * ask for, within `poolMax` (ADR 46); 0: no idle fill.
     */
    poolIdleMemoryPercent: env.SANDBOX_POOL_IDLE_MEMORY_PERCENT,
    /**
     * Creates the pool cannot serve: how many start at once (0: one per CPU of the host) and
     * how many may wait; a create that could not finish before its caller's deadline is
     * refused at once (503, Retry-After) rather than half-made and cancelled.
     */
    coldStarts: {
      concurrency: env.SANDBOX_COLD_STARTS || availableParallelism(),
      maxQueued: env.SANDBOX_COLD_START_QUEUE,
    },
    /**
     * Runs being started (files written, packages installed, process spawned): how many at
     * once (0: eight per CPU of the host) and how many may wait; a run that could not start
     * before its timeout is refused at once (503, Retry-After), before anything is written.
     */
    runStarts: {
      concurrency: env.SANDBOX_RUN_STARTS || 8 * availableParallelism(),
      maxQueued: env.SANDBOX_RUN_START_QUEUE,
      initialMs: 100,
    },
  };
}

const agentSchema = agentVars.transform((env, ctx) => ({
  host: env.AGENT_HOST,
  port: env.AGENT_PORT,
  previewPort: env.AGENT_PREVIEW_PORT,
  /** The host other components use to reach this agent (default: AGENT_HOST). */
  advertiseHost: env.AGENT_ADVERTISE_HOST ?? env.AGENT_HOST,
  nodeId:
    env.NODE_ID ??
    hostname()
      .toLowerCase()
      .replace(/[^a-z0-9-]/g, '-')
      .slice(0, 63),
  internalToken: env.INTERNAL_TOKEN,
  dockerSocket: env.DOCKER_SOCKET,
  sandboxImage: env.SANDBOX_IMAGE,
  sandboxNetwork: env.SANDBOX_NETWORK,
  sandboxRuntime: env.SANDBOX_RUNTIME,
  pidsLimit: env.SANDBOX_PIDS_LIMIT,
  /** Runs under way at once in one session; past it an execute is refused (429). */
  maxRunsPerSession: env.SANDBOX_MAX_RUNS,
  /** Open files per sandbox process (must not exceed dockerd's own hard limit). */
  nofileLimit: env.SANDBOX_NOFILE_LIMIT,
  /**
   * `on`: a session's CPU limit binds its own processes only, not the runner's work nor the
   * start-up of its zygotes (where the host has a cgroup v1 cpu controller; else as `off`).
   */
  cpuSplit: env.SANDBOX_CPU_SPLIT === 'on',
  /** With `cpuSplit`: the CPUs each sandbox's runner and zygotes may use besides. */
  runnerCpus: env.SANDBOX_RUNNER_CPUS,
  /**
   * With `cpuSplit`: the weight (cgroup v1 `cpu.shares`) of all the sessions' own processes
   * together, against each other task of the host (1024 at nice 0). By default one such task
   * per CPU (ADR 57).
   */
  sessionCpuShares: env.SANDBOX_CPU_SHARES ?? 1024 * availableParallelism(),
  extraCaCertsPath: env.SANDBOX_EXTRA_CA_CERTS,
  labelPrefix: env.SANDBOX_LABEL_PREFIX,
  ...storageSettings(env, ctx),
  ...networkSettings(env),
  ...poolSettings(env),
  /** How often the agent brings its sandboxes back to the state they should be in. */
  reconcileIntervalS: env.AGENT_RECONCILE_INTERVAL_S,
  /** Sandboxes the node takes at most (0: one per 32 MiB of the host's memory). */
  maxSandboxes:
    env.AGENT_MAX_SANDBOXES || Math.max(16, Math.floor(totalmem() / (32 * 1024 * 1024))),
  /** Below this much available memory the node takes no new session. */
  memoryReserveBytes: env.AGENT_MEMORY_RESERVE_MB * 1024 * 1024,
  /**
   * A gateway this agent announces itself to (its id and address, with the internal token),
   * at start and every `announceIntervalS`; absent: an operator registers the node.
   */
  gatewayUrl: env.AGENT_GATEWAY_URL,
  announceIntervalS: env.AGENT_ANNOUNCE_INTERVAL_S,
}));

/** The agent's configuration (`loadAgentConfig(env)`) and every variable it reads. */
export const { load: loadAgentConfig, envNames: AGENT_ENV_NAMES } = serviceConfig(agentSchema);
export type AgentConfig = ReturnType<typeof loadAgentConfig>;

/**
 * Names the store deep-sleeping sessions' workspaces go to: nodes naming the same one can wake
 * each other's sessions (an S3 bucket and prefix); a local store is the node's own.
 */
export function blobStoreId(config: Pick<AgentConfig, 'blobStore' | 'nodeId'>): string {
  const store = config.blobStore;
  if (store.kind === 'local') return `local:${config.nodeId}`;
  const host = store.endpoint === undefined ? 'aws' : new URL(store.endpoint).host;
  return `s3://${host}/${store.bucket}/${store.prefix}`;
}
