import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import { Redis } from 'ioredis';
import type { GatewayConfig } from '@sandbox/config';
import type { Logger } from '@sandbox/logger';
import { Periodic, serveMetrics } from '@sandbox/contract';
import type { NodeDrainer } from './sessions/node-drainer';
import { attachTerminalSockets } from './terminals/terminal-socket';
import type { AccountStore } from './accounts/account-store';
import { AgentPool } from './nodes/agent-pool';
import type { NodeStore } from './nodes/node-store';
import type { NodeViews } from './nodes/node-views';
import { GatewayMetrics } from './metrics/gateway-metrics';
import type { WakeObserver } from './sessions/session-lifecycle';
import { LocalInvalidations, RedisInvalidations, type Invalidations } from './cache/invalidations';
import { createApp, type AppDeps } from './app';
import { createDatabase, type Database } from './db/database';
import { migrate } from './db/migrate';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './db/embedded-postgres';
import type { ExecuteService } from './execute/execute-service';
import { ContextsService } from './contexts/contexts-service';
import { FilesService } from './files/files-service';
import { ProcessesService } from './processes/processes-service';
import type { IdempotencyStore } from './idempotency/idempotency-store';
import { MemoryRateLimiter } from './limits/memory-rate-limiter';
import type { RateLimiter } from './limits/rate-limiter';
import { RedisRateLimiter } from './limits/redis-rate-limiter';
import { SessionAccess } from './sessions/session-access';
import { SessionActivity } from './sessions/session-activity';
import { SessionLifecycle } from './sessions/session-lifecycle';
import { SessionService } from './sessions/session-service';
import type { SessionStore } from './sessions/session-store';
import { SessionSweeper } from './sessions/session-sweeper';
import type { SnapshotSeeds } from './sessions/session-seed';
import { resealPreviewTokens } from './sessions/preview-token-reseal';
import { SecretBox } from './secrets/secret-box';
import { disableRefusedEndpoints } from './webhooks/refused-endpoints';
import { WebhookDispatcher } from './webhooks/webhook-dispatcher';
import { WebhookService } from './webhooks/webhook-service';
import { WebhookStore } from './webhooks/webhook-store';
import { TerminalService } from './terminals/terminal-service';
import type { TerminalStore } from './terminals/terminal-store';

export async function openDatabase(
  config: GatewayConfig,
  logger: Logger,
  schema: string | undefined,
): Promise<{ db: Database; embedded?: EmbeddedPostgres }> {
  if (config.databaseUrl !== undefined) {
    if (schema !== undefined) {
      const setup = createDatabase({ connectionString: config.databaseUrl, maxConnections: 1 });
      await setup.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      await setup.close();
    }
    return {
      db: createDatabase({
        connectionString: config.databaseUrl,
        ...(schema === undefined ? {} : { schema }),
      }),
    };
  }
  logger.warn({ dataDir: config.pgliteDataDir }, 'no DATABASE_URL: using embedded PGlite');
  const embedded = await startEmbeddedPostgres(config.pgliteDataDir, (err) =>
    logger.error({ err }, 'the embedded Postgres failed'),
  );
  return {
    db: createDatabase({ connectionString: embedded.connectionString, maxConnections: 1 }),
    embedded,
  };
}

/**
 * What the replicas share in Redis: the rate limits' budgets and the stamps that keep their
 * caches true. Without REDIS_URL there is one replica, and both live in its memory.
 */
export function openShared(
  config: GatewayConfig,
  logger: Logger,
): { rateLimiter: RateLimiter; invalidations: Invalidations } {
  if (config.redisUrl === undefined) {
    logger.warn('no REDIS_URL: rate limits and caches are per gateway process');
    const invalidations = new LocalInvalidations();
    return { rateLimiter: new MemoryRateLimiter(Date.now, invalidations), invalidations };
  }
  const redis = new Redis(config.redisUrl, {
    maxRetriesPerRequest: 2,
    enableOfflineQueue: true,
    // The commands of concurrent requests go out in one write per turn of the event loop: with
    // 60 sessions busy, Redis took a fifth of the CPU it did (each run makes three). A command
    // with no company goes at once (cache/redis-send.ts).
    enableAutoPipelining: true,
  });
  redis.on('error', (err) => logger.error({ err }, 'redis error'));
  // The rate limiter owns the connection and closes it.
  return { rateLimiter: new RedisRateLimiter(redis), invalidations: new RedisInvalidations(redis) };
}

export function openSecretBox(config: GatewayConfig, logger: Logger): SecretBox | undefined {
  if (config.secretsKey === undefined) {
    logger.warn(
      "no SECRETS_KEY: webhooks cannot be registered or delivered, private previews' tokens are not kept",
    );
    return undefined;
  }
  return new SecretBox(config.secretsKey, config.secretsPreviousKeys);
}

/** The session pieces: their store, service, lifecycle and the way requests reach them. */
export function openSessions(
  config: GatewayConfig,
  logger: Logger,
  sessionStore: SessionStore,
  agents: AgentPool,
  invalidations: Invalidations,
  wakes: WakeObserver,
  box: SecretBox | undefined,
  snapshots: SnapshotSeeds,
) {
  const sessions = new SessionService({
    store: sessionStore,
    agents,
    logger,
    box,
    snapshots,
    previewDomain: config.previewDomain,
    previewUrlScheme: config.previewUrlScheme,
  });
  const lifecycle = new SessionLifecycle(sessionStore, agents, config, logger, wakes);
  const activity = new SessionActivity(
    sessionStore,
    invalidations,
    config.idleAfterS * 1000,
    logger,
  );
  const sessionAccess = new SessionAccess(sessionStore, activity, agents, lifecycle);
  return { sessions, lifecycle, activity, sessionAccess };
}

export interface Webhooks {
  store: WebhookStore;
  service: WebhookService;
  /** Absent when no SECRETS_KEY is configured. */
  dispatcher: WebhookDispatcher | undefined;
  box: SecretBox | undefined;
  /** Stops the check of the stored endpoints' URLs (`disableRefusedEndpoints`) and waits for it. */
  stopChecking: () => Promise<void>;
}

/**
 * Webhooks, with every stored secret (and every kept preview token) sealed under the current
 * key (and the lost ones told), and the endpoints whose URLs are refused now disabled, in the
 * background.
 */
export async function openWebhooks(
  config: GatewayConfig,
  logger: Logger,
  db: Database,
  invalidations: Invalidations,
): Promise<Webhooks> {
  const store = new WebhookStore(db, invalidations);
  const box = openSecretBox(config, logger);
  if (box !== undefined) {
    const resealed = await store.resealSecrets(
      (sealed) => box.isStale(sealed),
      (sealed) => box.seal(box.open(sealed)),
    );
    if (resealed > 0) logger.info({ resealed }, 'webhook secrets sealed with the current key');
    // Private previews' tokens are kept sealed for their owners too (ADR 41).
    const tokens = await resealPreviewTokens(db, box);
    if (tokens > 0) logger.info({ resealed: tokens }, 'preview tokens sealed with the current key');
    const lost = await store.countSecrets((sealed) => !box.canOpen(sealed));
    if (lost > 0) {
      logger.error({ webhooks: lost }, 'webhook secrets sealed with a key no longer configured');
    }
  }
  const checking = new AbortController();
  const checked = config.webhooks.allowPrivateUrls
    ? Promise.resolve(0)
    : disableRefusedEndpoints({ store, logger, signal: checking.signal });
  return {
    store,
    service: new WebhookService(store, box, config.webhooks.allowPrivateUrls),
    dispatcher:
      box === undefined
        ? undefined
        : new WebhookDispatcher({ store, box, logger, ...config.webhooks }),
    box,
    async stopChecking() {
      checking.abort();
      await checked;
    },
  };
}

/** Serves `app`; resolves once it listens, with its URL. */
export async function listen(
  app: Express,
  config: GatewayConfig,
): Promise<{ server: Server; url: string }> {
  const server = app.listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  // Receiving a request (not answering it: runs stream for minutes) must not stall forever.
  server.requestTimeout = Math.max(config.sessionOpTimeoutMs, config.fileOpTimeoutMs);
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://${config.host}:${port}` };
}

/** The agents of the configured nodes, with their heartbeats started. */
export async function connectAgents(
  config: GatewayConfig,
  logger: Logger,
  nodes: NodeStore,
): Promise<AgentPool> {
  const agents = new AgentPool(
    nodes,
    {
      token: config.internalToken,
      callTimeoutMs: config.sessionOpTimeoutMs,
      fileTimeoutMs: config.fileOpTimeoutMs,
      heartbeatMs: config.nodeHeartbeatMs,
      downAfterMs: config.nodeDownAfterMs,
    },
    logger,
  );
  await agents.start(config.agentNodes);
  return agents;
}

/**
 * The sweeper of sessions due (idle, deep sleep, expiry), told of sessions made or woken: one
 * may be due before the sweep planned from the database.
 */
export function sessionSweeper(
  config: GatewayConfig,
  logger: Logger,
  parts: Omit<
    ConstructorParameters<typeof SessionSweeper>[0],
    'logger' | 'intervalMs' | 'atDeadlines'
  >,
): SessionSweeper {
  const sweeper = new SessionSweeper({
    ...parts,
    logger,
    intervalMs: config.sessionSweepIntervalS * 1000,
    atDeadlines: config.sessionSweepAtDeadlines,
  });
  const idleDeadline = () => Date.now() + config.idleAfterS * 1000;
  parts.sessions.onCreated((session) =>
    sweeper.dueBy(new Date(Math.min(session.expiresAt.getTime(), idleDeadline()))),
  );
  parts.lifecycle.onWoken(() => sweeper.dueBy(new Date(idleDeadline())));
  return sweeper;
}

export interface AppParts {
  db: Database;
  metrics: GatewayMetrics;
  accounts: AccountStore;
  sessionStore: SessionStore;
  sessions: AppDeps['sessions'];
  sessionAccess: AppDeps['sessionAccess'];
  fleet: NodeViews;
  idempotency: IdempotencyStore;
  execute: ExecuteService;
  webhooks: Webhooks;
  terminalStore: TerminalStore;
  snapshots: AppDeps['snapshots'];
  rateLimiter: AppDeps['rateLimiter'];
}

/** The public API's app over the gateway's parts. */
export function publicApp(config: GatewayConfig, logger: Logger, parts: AppParts): Express {
  const { db, sessionAccess, webhooks, rateLimiter } = parts;
  return createApp({
    logger,
    metrics: parts.metrics,
    accounts: parts.accounts,
    sessionStore: parts.sessionStore,
    sessions: parts.sessions,
    sessionAccess,
    fleet: parts.fleet,
    idempotency: { store: parts.idempotency, waitMs: config.sessionOpTimeoutMs },
    execute: parts.execute,
    files: new FilesService(sessionAccess, webhooks.store, logger),
    contexts: new ContextsService(sessionAccess),
    processes: new ProcessesService(sessionAccess, config.stdinWaitMs),
    terminals: new TerminalService(parts.terminalStore, sessionAccess),
    webhooks: webhooks.service,
    snapshots: parts.snapshots,
    rateLimiter,
    adminToken: config.adminToken,
    internalToken: config.internalToken,
    bodyLimitBytes: config.bodyLimitBytes,
    sseKeepAliveMs: config.sseKeepAliveMs,
    corsOrigins: config.corsOrigins,
    readiness: [
      { name: 'postgres', check: () => db.query('SELECT 1') },
      { name: 'redis', check: () => rateLimiter.ping() },
    ],
  });
}

interface Background {
  drainer: NodeDrainer;
  /** `host:port` of the `/metrics` listener, if any. */
  metricsAddress: string | undefined;
  /** Stops the loops and the listeners below, before the server closes. */
  stop(): Promise<void>;
}

/**
 * What runs beside the API once it listens: the `/metrics` listener, the terminals'
 * WebSockets, the session sweeper, the webhook dispatcher and the drain of nodes.
 */
export async function startBackground(
  config: GatewayConfig,
  logger: Logger,
  parts: {
    server: Server;
    metrics: GatewayMetrics;
    sweeper: SessionSweeper;
    webhooks: Webhooks;
    drainer: NodeDrainer;
    terminals: Parameters<typeof attachTerminalSockets>[1];
  },
): Promise<Background> {
  const { sweeper, webhooks, drainer } = parts;
  const metricsServer =
    config.metrics.port === undefined
      ? undefined
      : await serveMetrics(parts.metrics.registry, {
          ...config.metrics,
          port: config.metrics.port,
        });
  const closeTerminals = attachTerminalSockets(parts.server, parts.terminals);
  sweeper.start();
  webhooks.dispatcher?.start();
  const draining = new Periodic(
    () => drainer.pass(),
    config.nodeDrainIntervalMs,
    logger,
    'draining nodes failed',
  );
  draining.start();
  return {
    drainer,
    metricsAddress: metricsServer?.address,
    async stop() {
      await metricsServer?.stop();
      await draining.stop();
      await sweeper.stop();
      await webhooks.dispatcher?.stop();
      await webhooks.stopChecking();
      closeTerminals();
    },
  };
}

/** Opens the database and applies the migrations it lacks. */
export async function openMigratedDatabase(
  config: GatewayConfig,
  logger: Logger,
  schema: string | undefined,
): ReturnType<typeof openDatabase> {
  const opened = await openDatabase(config, logger, schema);
  const applied = await migrate(opened.db);
  if (applied.length > 0) logger.info({ applied }, 'database migrated');
  return opened;
}

/** The gateway's `/metrics`, reading the sessions, the webhooks' backlog and the nodes. */
export function gatewayMetrics(
  sessionStore: SessionStore,
  webhooks: Webhooks,
  agents: AgentPool,
): GatewayMetrics {
  return new GatewayMetrics({
    sessionsByState: () => sessionStore.countByState(),
    webhookBacklog: () => webhooks.store.backlog(),
    nodes: () => agents.snapshot(),
  });
}
