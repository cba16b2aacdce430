import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import { Redis } from 'ioredis';
import type { GatewayConfig } from '@sandbox/config';
import type { Logger } from '@sandbox/logger';
import { AccountStore } from './accounts/account-store';
import { Periodic, serveMetrics } from '@sandbox/contract';
import { AgentPool } from './nodes/agent-pool';
import { NodeStore } from './nodes/node-store';
import { NodeViews } from './nodes/node-views';
import { GatewayMetrics } from './metrics/gateway-metrics';
import type { WakeObserver } from './sessions/session-lifecycle';
import { LocalInvalidations, RedisInvalidations, type Invalidations } from './cache/invalidations';
import { createApp } from './app';
import { createDatabase, type Database } from './db/database';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './db/embedded-postgres';
import { migrate } from './db/migrate';
import { ExecuteService } from './execute/execute-service';
import { ContextsService } from './contexts/contexts-service';
import { FilesService } from './files/files-service';
import { ProcessesService } from './processes/processes-service';
import { IdempotencyStore } from './idempotency/idempotency-store';
import { MemoryRateLimiter } from './limits/memory-rate-limiter';
import type { RateLimiter } from './limits/rate-limiter';
import { RedisRateLimiter } from './limits/redis-rate-limiter';
import { NodeDrainer } from './sessions/node-drainer';
import { SessionAccess } from './sessions/session-access';
import { SessionActivity } from './sessions/session-activity';
import { SessionLifecycle } from './sessions/session-lifecycle';
import { SessionService } from './sessions/session-service';
import { SessionStore } from './sessions/session-store';
import { SessionSweeper } from './sessions/session-sweeper';
import { SecretBox } from './secrets/secret-box';
import { disableRefusedEndpoints } from './webhooks/refused-endpoints';
import { WebhookDispatcher } from './webhooks/webhook-dispatcher';
import { WebhookService } from './webhooks/webhook-service';
import { WebhookStore } from './webhooks/webhook-store';
import { TerminalService } from './terminals/terminal-service';
import { attachTerminalSockets } from './terminals/terminal-socket';
import { TerminalStore } from './terminals/terminal-store';

export interface GatewayOptions {
  config: GatewayConfig;
  logger: Logger;
  /** Postgres schema for every table (tests isolate themselves this way). */
  schema?: string;
}

export interface RunningGateway {
  /** `http://host:port` */
  readonly url: string;
  readonly db: Database;
  readonly sweeper: SessionSweeper;
  /** `host:port` of its `/metrics` listener (METRICS_PORT); absent without one. */
  readonly metricsAddress: string | undefined;
  /** The replica's view of the nodes (`tick`: a heartbeat now) and the drain's passes. */
  readonly fleet: { agents: AgentPool; drainer: NodeDrainer };
  /** Absent when no SECRETS_KEY is configured. */
  readonly webhookDispatcher: WebhookDispatcher | undefined;
  stop(): Promise<void>;
}

async function openDatabase(
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
  const embedded = await startEmbeddedPostgres(config.pgliteDataDir);
  return {
    db: createDatabase({ connectionString: embedded.connectionString, maxConnections: 1 }),
    embedded,
  };
}

/**
 * What the replicas share in Redis: the rate limits' budgets and the stamps that keep their
 * caches true. Without REDIS_URL there is one replica, and both live in its memory.
 */
function openShared(
  config: GatewayConfig,
  logger: Logger,
): { rateLimiter: RateLimiter; invalidations: Invalidations } {
  if (config.redisUrl === undefined) {
    logger.warn('no REDIS_URL: rate limits and caches are per gateway process');
    return { rateLimiter: new MemoryRateLimiter(), invalidations: new LocalInvalidations() };
  }
  const redis = new Redis(config.redisUrl, {
    maxRetriesPerRequest: 2,
    enableOfflineQueue: true,
    // The commands of concurrent requests go out in one write per turn of the event loop: with
    // 60 sessions busy, Redis took a fifth of the CPU it did (each request makes four).
    enableAutoPipelining: true,
  });
  redis.on('error', (err) => logger.error({ err }, 'redis error'));
  // The rate limiter owns the connection and closes it.
  return { rateLimiter: new RedisRateLimiter(redis), invalidations: new RedisInvalidations(redis) };
}

function openSecretBox(config: GatewayConfig, logger: Logger): SecretBox | undefined {
  if (config.secretsKey === undefined) {
    logger.warn('no SECRETS_KEY: webhooks cannot be registered or delivered');
    return undefined;
  }
  return new SecretBox(config.secretsKey, config.secretsPreviousKeys);
}

/** The session pieces: their store, service, lifecycle and the way requests reach them. */
function openSessions(
  config: GatewayConfig,
  logger: Logger,
  sessionStore: SessionStore,
  agents: AgentPool,
  invalidations: Invalidations,
  wakes: WakeObserver,
) {
  const sessions = new SessionService({
    store: sessionStore,
    agents,
    logger,
    previewDomain: config.previewDomain,
    previewUrlScheme: config.previewUrlScheme,
  });
  const lifecycle = new SessionLifecycle(
    sessionStore,
    agents,
    { idleAfterS: config.idleAfterS, deepSleepAfterS: config.deepSleepAfterS },
    logger,
    wakes,
  );
  const activity = new SessionActivity(
    sessionStore,
    invalidations,
    config.idleAfterS * 1000,
    logger,
  );
  const sessionAccess = new SessionAccess(sessionStore, activity, agents, lifecycle);
  return { sessions, lifecycle, activity, sessionAccess };
}

interface Webhooks {
  store: WebhookStore;
  service: WebhookService;
  /** Absent when no SECRETS_KEY is configured. */
  dispatcher: WebhookDispatcher | undefined;
  box: SecretBox | undefined;
  /** Stops the check of the stored endpoints' URLs (`disableRefusedEndpoints`) and waits for it. */
  stopChecking: () => Promise<void>;
}

/**
 * Webhooks, with every stored secret sealed under the current key (and the lost ones told),
 * and the endpoints whose URLs are refused now disabled, in the background.
 */
async function openWebhooks(
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
async function listen(
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

/** Wires the real dependencies, migrates the schema and serves the public API. */
export async function startGateway({
  config,
  logger,
  schema,
}: GatewayOptions): Promise<RunningGateway> {
  const { db, embedded } = await openDatabase(config, logger, schema);
  const applied = await migrate(db);
  if (applied.length > 0) logger.info({ applied }, 'database migrated');

  const { rateLimiter, invalidations } = openShared(config, logger);
  const nodes = new NodeStore(db);
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
  const webhooks = await openWebhooks(config, logger, db, invalidations);
  const sessionStore = new SessionStore(db, invalidations);
  const metrics = new GatewayMetrics({
    sessionsByState: () => sessionStore.countByState(),
    webhookBacklog: () => webhooks.store.backlog(),
    nodes: () => agents.snapshot(),
  });
  const { sessions, lifecycle, activity, sessionAccess } = openSessions(
    config,
    logger,
    sessionStore,
    agents,
    invalidations,
    metrics,
  );
  const idempotency = new IdempotencyStore(db, webhooks.box);
  const terminalStore = new TerminalStore(db);
  const sweeper = new SessionSweeper({
    store: sessionStore,
    sessions,
    lifecycle,
    idempotency,
    terminals: terminalStore,
    logger,
    intervalMs: config.sessionSweepIntervalS * 1000,
    atDeadlines: config.sessionSweepAtDeadlines,
  });
  // A session that becomes active may be due before the sweep planned from the database.
  const idleDeadline = () => Date.now() + config.idleAfterS * 1000;
  sessions.onCreated((session) =>
    sweeper.dueBy(new Date(Math.min(session.expiresAt.getTime(), idleDeadline()))),
  );
  lifecycle.onWoken(() => sweeper.dueBy(new Date(idleDeadline())));

  const execute = new ExecuteService(sessionAccess, webhooks.store, logger);
  const accounts = new AccountStore(db, invalidations);
  const app = createApp({
    logger,
    metrics,
    accounts,
    sessionStore,
    sessions,
    sessionAccess,
    fleet: new NodeViews(nodes, agents, sessionStore),
    idempotency: { store: idempotency, waitMs: config.sessionOpTimeoutMs },
    execute,
    files: new FilesService(sessionAccess, webhooks.store, logger),
    contexts: new ContextsService(sessionAccess),
    processes: new ProcessesService(sessionAccess, config.stdinWaitMs),
    terminals: new TerminalService(terminalStore, sessionAccess),
    webhooks: webhooks.service,
    rateLimiter,
    adminToken: config.adminToken,
    internalToken: config.internalToken,
    bodyLimitBytes: config.bodyLimitBytes,
    sseKeepAliveMs: config.sseKeepAliveMs,
    readiness: [
      { name: 'postgres', check: () => db.query('SELECT 1') },
      { name: 'redis', check: () => rateLimiter.ping() },
    ],
  });
  const { server, url } = await listen(app, config);
  const metricsServer =
    config.metrics.port === undefined
      ? undefined
      : await serveMetrics(metrics.registry, { ...config.metrics, port: config.metrics.port });
  const closeTerminals = attachTerminalSockets(server, {
    store: terminalStore,
    accounts,
    access: sessionAccess,
    logger,
  });
  sweeper.start();
  webhooks.dispatcher?.start();
  const drainer = new NodeDrainer(sessionStore, agents, logger);
  const draining = new Periodic(
    () => drainer.pass(),
    config.nodeDrainIntervalMs,
    logger,
    'draining nodes failed',
  );
  draining.start();
  logger.info({ url }, 'gateway listening');

  return {
    url,
    db,
    sweeper,
    fleet: { agents, drainer },
    webhookDispatcher: webhooks.dispatcher,
    metricsAddress: metricsServer?.address,
    async stop() {
      await metricsServer?.stop();
      await draining.stop();
      await sweeper.stop();
      await webhooks.dispatcher?.stop();
      await webhooks.stopChecking();
      closeTerminals();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      agents.close();
      await execute.settle();
      await activity.stop();
      await rateLimiter.close();
      await db.close();
      await embedded?.stop();
    },
  };
}
