import type { Server } from 'node:http';
import type { GatewayConfig } from '@sandbox/config';
import type { Logger } from '@sandbox/logger';
import { AccountStore } from './accounts/account-store';
import type { AgentPool } from './nodes/agent-pool';
import { NodeStore } from './nodes/node-store';
import { NodeViews } from './nodes/node-views';
import type { Database } from './db/database';
import { ExecuteService } from './execute/execute-service';
import { IdempotencyStore } from './idempotency/idempotency-store';
import { NodeDrainer } from './sessions/node-drainer';
import { SessionStore } from './sessions/session-store';
import type { SessionSweeper } from './sessions/session-sweeper';
import { SnapshotService } from './snapshots/snapshot-service';
import { SnapshotStore } from './snapshots/snapshot-store';
import type { WebhookDispatcher } from './webhooks/webhook-dispatcher';
import { TerminalStore } from './terminals/terminal-store';
import {
  connectAgents,
  listen,
  gatewayMetrics,
  openMigratedDatabase,
  openSessions,
  openShared,
  openWebhooks,
  publicApp,
  sessionSweeper,
  startBackground,
} from './gateway-parts';

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

/** Wires the real dependencies, migrates the schema and serves the public API. */
export async function startGateway({
  config,
  logger,
  schema,
}: GatewayOptions): Promise<RunningGateway> {
  const { db, embedded } = await openMigratedDatabase(config, logger, schema);
  const { rateLimiter, invalidations } = openShared(config, logger);
  const nodes = new NodeStore(db);
  const agents = await connectAgents(config, logger, nodes);
  const webhooks = await openWebhooks(config, logger, db, invalidations);
  const sessionStore = new SessionStore(db, invalidations);
  const metrics = gatewayMetrics(sessionStore, webhooks, agents);
  const snapshotStore = new SnapshotStore(db);
  const { sessions, lifecycle, activity, sessionAccess } = openSessions(
    config,
    logger,
    sessionStore,
    agents,
    invalidations,
    metrics,
    webhooks.box,
    snapshotStore,
  );
  const snapshots = new SnapshotService({
    store: snapshotStore,
    access: sessionAccess,
    agents,
    logger,
  });
  const idempotency = new IdempotencyStore(db, webhooks.box);
  const terminalStore = new TerminalStore(db);
  const sweeper = sessionSweeper(config, logger, {
    store: sessionStore,
    sessions,
    lifecycle,
    idempotency,
    terminals: terminalStore,
    snapshots,
  });
  const execute = new ExecuteService(sessionAccess, webhooks.store, logger);
  const accounts = new AccountStore(db, invalidations);
  const app = publicApp(config, logger, {
    db,
    metrics,
    accounts,
    sessionStore,
    sessions,
    sessionAccess,
    fleet: new NodeViews(nodes, agents, sessionStore),
    idempotency,
    execute,
    webhooks,
    terminalStore,
    snapshots,
    rateLimiter,
  });
  const { server, url } = await listen(app, config);
  const background = await startBackground(config, logger, {
    server,
    metrics,
    sweeper,
    webhooks,
    drainer: new NodeDrainer(sessionStore, agents, logger),
    terminals: { store: terminalStore, accounts, access: sessionAccess, logger },
  });
  logger.info({ url }, 'gateway listening');

  return {
    url,
    db,
    sweeper,
    fleet: { agents, drainer: background.drainer },
    webhookDispatcher: webhooks.dispatcher,
    metricsAddress: background.metricsAddress,
    stop: () =>
      stopGateway({ background, server, agents, execute, activity, rateLimiter, db, embedded }),
  };
}

/** What `stop` closes, each through the one call it needs. */
interface Stoppable {
  background: { stop(): Promise<void> };
  server: Server;
  agents: { close(): void };
  execute: { settle(): Promise<void> };
  activity: { stop(): Promise<void> };
  rateLimiter: { close(): Promise<void> };
  db: { close(): Promise<void> };
  embedded: { stop(): Promise<void> } | undefined;
}

/**
 * Stops the gateway's parts one after the other: the background tasks, the server, the agent
 * channels, the runs in flight, the activity flush, Redis, Postgres (embedded: its process).
 */
async function stopGateway(parts: Stoppable): Promise<void> {
  await parts.background.stop();
  await closeServer(parts.server);
  parts.agents.close();
  await parts.execute.settle();
  await parts.activity.stop();
  await parts.rateLimiter.close();
  await parts.db.close();
  await parts.embedded?.stop();
}

/** Stops accepting connections and closes the open ones. */
function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
