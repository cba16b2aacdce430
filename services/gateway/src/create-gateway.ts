import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import type { GatewayConfig } from '@sandbox/config';
import type { Logger } from '@sandbox/logger';
import { AccountStore } from './accounts/account-store';
import { AgentPool } from './agents/agent-pool';
import { createApp } from './app';
import { createDatabase, type Database } from './db/database';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './db/embedded-postgres';
import { migrate } from './db/migrate';
import { ExecuteService } from './execute/execute-service';
import { FilesService } from './files/files-service';
import { ProcessesService } from './processes/processes-service';
import { IdempotencyStore } from './idempotency/idempotency-store';
import { MemoryRateLimiter } from './limits/memory-rate-limiter';
import type { RateLimiter } from './limits/rate-limiter';
import { RedisRateLimiter } from './limits/redis-rate-limiter';
import { SessionLifecycle } from './sessions/session-lifecycle';
import { SessionService } from './sessions/session-service';
import { SessionStore } from './sessions/session-store';
import { SessionSweeper } from './sessions/session-sweeper';

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

function openRateLimiter(config: GatewayConfig, logger: Logger): RateLimiter {
  if (config.redisUrl === undefined) {
    logger.warn('no REDIS_URL: rate limits are per gateway process');
    return new MemoryRateLimiter();
  }
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 2, enableOfflineQueue: true });
  redis.on('error', (err) => logger.error({ err }, 'redis error'));
  return new RedisRateLimiter(redis);
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

  const rateLimiter = openRateLimiter(config, logger);
  const agents = new AgentPool(config.agentNodes, config.internalToken, {
    callTimeoutMs: config.sessionOpTimeoutMs,
    fileTimeoutMs: config.fileOpTimeoutMs,
  });
  const accounts = new AccountStore(db);
  const sessionStore = new SessionStore(db);
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
  );
  const execute = new ExecuteService(sessionStore, agents, lifecycle);
  const files = new FilesService(sessionStore, agents, lifecycle);
  const processes = new ProcessesService(sessionStore, agents, lifecycle);
  const idempotency = new IdempotencyStore(db);
  const sweeper = new SessionSweeper({
    store: sessionStore,
    sessions,
    lifecycle,
    idempotency,
    logger,
    intervalMs: config.sessionSweepIntervalS * 1000,
  });

  const app = createApp({
    logger,
    accounts,
    sessionStore,
    sessions,
    lifecycle,
    idempotency: { store: idempotency, waitMs: config.sessionOpTimeoutMs },
    execute,
    files,
    processes,
    rateLimiter,
    agents,
    adminToken: config.adminToken,
    internalToken: config.internalToken,
    bodyLimitBytes: config.bodyLimitBytes,
  });
  const server = app.listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  // Receiving a request (not answering it: runs stream for minutes) must not stall forever.
  server.requestTimeout = Math.max(config.sessionOpTimeoutMs, config.fileOpTimeoutMs);
  sweeper.start();
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.host}:${port}`;
  logger.info({ url }, 'gateway listening');

  return {
    url,
    db,
    sweeper,
    async stop() {
      await sweeper.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      agents.close();
      await rateLimiter.close();
      await db.close();
      await embedded?.stop();
    },
  };
}
