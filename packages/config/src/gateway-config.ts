import { z } from 'zod';
import { parseAgentNodes } from './agent-nodes';
import { intVar, logLevel, optionalString, parseEnv, type Env } from './env-schema';

const gatewaySchema = z
  .object({
    GATEWAY_HOST: z.string().default('127.0.0.1'),
    GATEWAY_PORT: intVar(8080, 0, 65535),
    DATABASE_URL: optionalString(),
    PGLITE_DATA_DIR: z.string().default('.data/pglite'),
    REDIS_URL: optionalString(),
    AGENT_NODES: z.string().default('local=127.0.0.1:50051'),
    INTERNAL_TOKEN: optionalString(),
    ADMIN_TOKEN: optionalString(),
    PREVIEW_DOMAIN: z.string().default('preview.localhost'),
    PREVIEW_URL_SCHEME: z.enum(['https', 'http']).default('https'),
    SESSION_OP_TIMEOUT_MS: intVar(10_000, 100),
    FILE_OP_TIMEOUT_MS: intVar(30_000, 100),
    SESSION_SWEEP_INTERVAL_S: intVar(30, 1),
    SESSION_IDLE_AFTER_S: intVar(300, 1),
    SESSION_DEEP_SLEEP_AFTER_S: intVar(1800, 1),
    BODY_LIMIT_MB: intVar(100, 1, 1024),
    LOG_LEVEL: logLevel(),
  })
  .transform((env) => ({
    host: env.GATEWAY_HOST,
    port: env.GATEWAY_PORT,
    databaseUrl: env.DATABASE_URL,
    pgliteDataDir: env.PGLITE_DATA_DIR,
    redisUrl: env.REDIS_URL,
    agentNodes: parseAgentNodes(env.AGENT_NODES),
    internalToken: env.INTERNAL_TOKEN,
    adminToken: env.ADMIN_TOKEN,
    previewDomain: env.PREVIEW_DOMAIN,
    previewUrlScheme: env.PREVIEW_URL_SCHEME,
    sessionOpTimeoutMs: env.SESSION_OP_TIMEOUT_MS,
    fileOpTimeoutMs: env.FILE_OP_TIMEOUT_MS,
    sessionSweepIntervalS: env.SESSION_SWEEP_INTERVAL_S,
    /** Both count from the session's last request (decisions.md). */
    idleAfterS: env.SESSION_IDLE_AFTER_S,
    deepSleepAfterS: env.SESSION_DEEP_SLEEP_AFTER_S,
    bodyLimitBytes: env.BODY_LIMIT_MB * 1024 * 1024,
    logLevel: env.LOG_LEVEL,
  }));

export type GatewayConfig = Readonly<z.output<typeof gatewaySchema>>;

/** The gateway's configuration, read from `env` (default: the process environment). */
export function loadGatewayConfig(env: Env = process.env): GatewayConfig {
  return parseEnv(gatewaySchema, env);
}
