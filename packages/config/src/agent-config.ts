import { hostname } from 'node:os';
import { z } from 'zod';
import { intVar, logLevel, optionalString, parseEnv, type Env } from './env-schema';

const agentSchema = z
  .object({
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
    SANDBOX_NOFILE_LIMIT: intVar(8192, 256, 1_048_576),
    SANDBOX_EXTRA_CA_CERTS: optionalString(),
    SANDBOX_LABEL_PREFIX: z.string().default('io.sandbox'),
    SANDBOX_DISK_QUOTA: z.enum(['loop', 'none']).default('loop'),
    SANDBOX_EGRESS_FIREWALL: z.enum(['on', 'off']).default('on'),
    PACKAGE_CACHE_DIR: z.string().default('/var/lib/sandbox-agent/packages'),
    BLOB_STORE_DIR: z.string().default('/var/lib/sandbox-agent/blobs'),
    NPM_COMMAND: z.string().default('npm'),
    SANDBOX_EGRESS_ALLOW: z.string().default(''),
    SANDBOX_WORKSPACE_DIR: z.string().default('/var/lib/sandbox-agent/workspaces'),
    LOG_LEVEL: logLevel(),
  })
  .transform((env) => ({
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
    /** Open files per sandbox process (must not exceed dockerd's own hard limit). */
    nofileLimit: env.SANDBOX_NOFILE_LIMIT,
    extraCaCertsPath: env.SANDBOX_EXTRA_CA_CERTS,
    labelPrefix: env.SANDBOX_LABEL_PREFIX,
    /** `loop`: each workspace is its own ext4 filesystem of the session's disk size. */
    diskQuota: env.SANDBOX_DISK_QUOTA,
    workspaceDir: env.SANDBOX_WORKSPACE_DIR,
    /** The node's package cache: npm's cache and installed bundles, shared by all sessions. */
    packageCacheDir: env.PACKAGE_CACHE_DIR,
    /** Where deep-sleeping sessions' workspaces are kept (a local directory). */
    blobStoreDir: env.BLOB_STORE_DIR,
    npmCommand: env.NPM_COMMAND,
    /** `on`: sandboxes reach the internet only: not this host, private ranges or metadata. */
    egressFirewall: env.SANDBOX_EGRESS_FIREWALL === 'on',
    /** CIDRs sandboxes may reach although private (e.g. a registry mirror). */
    egressAllow: env.SANDBOX_EGRESS_ALLOW.split(',')
      .map((cidr) => cidr.trim())
      .filter((cidr) => cidr !== ''),
    logLevel: env.LOG_LEVEL,
  }));

export type AgentConfig = Readonly<z.output<typeof agentSchema>>;

/** The agent's configuration, read from `env` (default: the process environment). */
export function loadAgentConfig(env: Env = process.env): AgentConfig {
  return parseEnv(agentSchema, env);
}
