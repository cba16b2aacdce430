import { z } from 'zod';
import { parseAgentNodes } from './agent-nodes';
import { intVar, listVar, optionalString, serviceConfig, serviceVars } from './env-schema';

/** 32 bytes, base64-encoded (e.g. `openssl rand -base64 32`). */
const secretsKey = z
  .string()
  .refine((value) => Buffer.from(value, 'base64').length === 32, 'must be 32 bytes in base64')
  .transform((value) => Buffer.from(value, 'base64'));

/** `*`, or a web origin exactly as a browser sends it (`https://app.example.com`, no path). */
const browserOrigin = z.string().refine((value) => {
  if (value === '*') return true;
  try {
    const url = new URL(value);
    return ['http:', 'https:'].includes(url.protocol) && url.origin === value;
  } catch {
    return false;
  }
}, 'must be * or an origin such as https://app.example.com (scheme, host and port only)');

const gatewaySchema = z
  .object({
    GATEWAY_HOST: z.string().default('127.0.0.1'),
    GATEWAY_PORT: intVar(8080, 0, 65535),
    DATABASE_URL: optionalString(),
    PGLITE_DATA_DIR: z.string().default('.data/pglite'),
    REDIS_URL: optionalString(),
    AGENT_NODES: z.string().default('local=127.0.0.1:50051'),
    NODE_HEARTBEAT_MS: intVar(2000, 100, 60_000),
    NODE_DOWN_AFTER_MS: intVar(10_000, 200, 600_000),
    NODE_DRAIN_INTERVAL_MS: intVar(2000, 100, 600_000),
    INTERNAL_TOKEN: optionalString(),
    ADMIN_TOKEN: optionalString(),
    PREVIEW_DOMAIN: z.string().default('preview.localhost'),
    PREVIEW_URL_SCHEME: z.enum(['https', 'http']).default('https'),
    SESSION_OP_TIMEOUT_MS: intVar(10_000, 100),
    FILE_OP_TIMEOUT_MS: intVar(30_000, 100),
    PROCESS_STDIN_WAIT_MS: intVar(30_000, 100, 60_000),
    SESSION_SWEEP_INTERVAL_S: intVar(30, 1),
    SESSION_SWEEP_AT_DEADLINES: z.enum(['true', 'false']).default('true'),
    SESSION_IDLE_AFTER_S: intVar(300, 1),
    SESSION_DEEP_SLEEP_AFTER_S: intVar(1800, 1),
    BODY_LIMIT_MB: intVar(100, 1, 1024),
    SSE_KEEP_ALIVE_S: intVar(15, 1, 300),
    SECRETS_KEY: optionalString().pipe(secretsKey.optional()),
    SECRETS_PREVIOUS_KEYS: listVar(secretsKey),
    WEBHOOK_POLL_INTERVAL_MS: intVar(1000, 50),
    WEBHOOK_TIMEOUT_MS: intVar(10_000, 100, 60_000),
    WEBHOOK_RETRY_SCHEDULE_S: z
      .string()
      .default('5,300,1800,7200,18000,36000,36000')
      .transform((list) => list.split(',').map((item) => Number(item.trim())))
      .pipe(z.array(z.number().int().min(1).max(86_400)).min(1).max(20)),
    WEBHOOK_ALLOW_PRIVATE_URLS: z.enum(['true', 'false']).default('false'),
    CORS_ALLOWED_ORIGINS: listVar(browserOrigin),
    WEBHOOK_DISABLE_AFTER_S: intVar(5 * 86_400, 1),
    ...serviceVars,
  })
  .transform((env) => ({
    host: env.GATEWAY_HOST,
    port: env.GATEWAY_PORT,
    databaseUrl: env.DATABASE_URL,
    pgliteDataDir: env.PGLITE_DATA_DIR,
    redisUrl: env.REDIS_URL,
    /** Nodes registered at start (more join through the registry: announced or added). */
    agentNodes: parseAgentNodes(env.AGENT_NODES),
    /** How often every node's status is asked (its heartbeat) and the registry re-read. */
    nodeHeartbeatMs: env.NODE_HEARTBEAT_MS,
    /** A node whose heartbeats failed this long is down: no placement, its sessions 503. */
    nodeDownAfterMs: env.NODE_DOWN_AFTER_MS,
    /** How often draining nodes' sessions are moved (a few per node each time). */
    nodeDrainIntervalMs: env.NODE_DRAIN_INTERVAL_MS,
    internalToken: env.INTERNAL_TOKEN,
    adminToken: env.ADMIN_TOKEN,
    previewDomain: env.PREVIEW_DOMAIN,
    previewUrlScheme: env.PREVIEW_URL_SCHEME,
    sessionOpTimeoutMs: env.SESSION_OP_TIMEOUT_MS,
    fileOpTimeoutMs: env.FILE_OP_TIMEOUT_MS,
    /** How long a stdin write waits for its process to read it (408 after). */
    stdinWaitMs: env.PROCESS_STDIN_WAIT_MS,
    /** The longest between two sweeps (retries); transitions also run at their deadline. */
    sessionSweepIntervalS: env.SESSION_SWEEP_INTERVAL_S,
    /** Off only where a test drives the sweeps itself. */
    sessionSweepAtDeadlines: env.SESSION_SWEEP_AT_DEADLINES === 'true',
    /** Both count from the session's last request (decisions.md). */
    idleAfterS: env.SESSION_IDLE_AFTER_S,
    deepSleepAfterS: env.SESSION_DEEP_SLEEP_AFTER_S,
    bodyLimitBytes: env.BODY_LIMIT_MB * 1024 * 1024,
    /** A stream silent this long gets a `: keep-alive` comment (decisions.md: 15 s). */
    sseKeepAliveMs: env.SSE_KEEP_ALIVE_S * 1000,
    /** AES-256-GCM key for secrets stored at rest (webhook signing secrets). */
    secretsKey: env.SECRETS_KEY,
    /** Older keys, for opening values sealed before a rotation (docs/security.md). */
    secretsPreviousKeys: env.SECRETS_PREVIOUS_KEYS,
    webhooks: {
      pollIntervalMs: env.WEBHOOK_POLL_INTERVAL_MS,
      timeoutMs: env.WEBHOOK_TIMEOUT_MS,
      /** Seconds before each retry; when they run out the delivery is marked failed. */
      retryScheduleS: env.WEBHOOK_RETRY_SCHEDULE_S,
      /** For development and tests only: lets webhooks reach loopback and private ranges. */
      allowPrivateUrls: env.WEBHOOK_ALLOW_PRIVATE_URLS === 'true',
      /** An endpoint with no successful delivery for this long (while failing) is disabled. */
      disableAfterS: env.WEBHOOK_DISABLE_AFTER_S,
    },
    /**
     * Web origins whose pages may call the API from a browser (CORS), with a key of their
     * own; `*` for any. Empty (the default): browsers get no CORS answer, so no page calls it.
     */
    corsOrigins: env.CORS_ALLOWED_ORIGINS,
  }));

/** The gateway's configuration (`loadGatewayConfig(env)`) and every variable it reads. */
export const { load: loadGatewayConfig, envNames: GATEWAY_ENV_NAMES } =
  serviceConfig(gatewaySchema);
export type GatewayConfig = ReturnType<typeof loadGatewayConfig>;
