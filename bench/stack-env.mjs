// The environments of a bench stack's agent and gateway, and its gateway in a process of its
// own (as ./scripts/up runs it). Shared through lib.mjs.
import { rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { PREVIEW_DOMAIN, startGatewayProcess } from './processes.mjs';

const require = createRequire(import.meta.url);
const pg = require('../services/gateway/node_modules/pg');

/** The OCI runtime of the benchmark's sandboxes (Docker's default when unset). */
export const SANDBOX_RUNTIME = process.env.SANDBOX_RUNTIME || undefined;
/** Where bench agents keep their sandboxes' disks, caches and blobs, and gateways their logs. */
export const BENCH_DIR = '/var/lib/sandbox-agent/bench';
const EGRESS_FIREWALL = process.env.BENCH_EGRESS_FIREWALL ?? 'on';

/**
 * The gateway's stores. `embedded` (the default), as ./scripts/up runs it without DATABASE_URL
 * and REDIS_URL: PGlite on disk in the gateway's process, rate limits and cache stamps in its
 * memory. `external` (BENCH_STORES=external): the PostgreSQL and Redis of ./scripts/bench, as a
 * deployment with replicas runs it.
 */
export const STORES = storesOf(process.env.BENCH_STORES);

/** `BENCH_STORES`, checked. */
export function storesOf(value = 'embedded') {
  if (value !== 'embedded' && value !== 'external') {
    throw new Error(`BENCH_STORES is embedded or external, not ${JSON.stringify(value)}`);
  }
  return value;
}

/**
 * The stores' addresses for a bench gateway: ./scripts/bench's PostgreSQL and Redis where
 * STORES is external; none (embedded) otherwise.
 */
export function benchStores() {
  if (STORES === 'embedded') return { databaseUrl: undefined, redisUrl: undefined };
  const databaseUrl = process.env.BENCH_DATABASE_URL;
  const redisUrl = process.env.BENCH_REDIS_URL;
  if (!databaseUrl || !redisUrl) {
    throw new Error(
      'BENCH_STORES=external: run through ./scripts/bench (BENCH_DATABASE_URL, BENCH_REDIS_URL)',
    );
  }
  return { databaseUrl, redisUrl };
}

/** Where a bench gateway with embedded stores keeps its PGlite data. */
export const pgliteDir = (nodeId) => `${BENCH_DIR}/${nodeId}-pglite`;

/**
 * A gateway in a process of its own, as ./scripts/up runs it (its log at info in the bench's
 * directory, removed at its stop). With external stores its tables are in `schema` of the
 * bench's database, and `db` is the bench's own connection to them; embedded, they are in its
 * PGlite (no `db`: PGlite serves one connection, the gateway's), whose files go with the node's.
 */
export async function gatewayOfItsOwn({ nodeId, databaseUrl }, env, schema) {
  const logFile = `${BENCH_DIR}/${nodeId}-gateway.log`;
  const db = databaseUrl === undefined ? undefined : await schemaOf(databaseUrl, schema);
  try {
    const gateway = await startGatewayProcess({ ...env, ...db?.env }, logFile);
    return {
      url: gateway.url,
      pid: gateway.pid,
      db: db?.client,
      async stop() {
        await gateway.stop();
        await db?.client.end();
        await rm(logFile, { force: true });
      },
    };
  } catch (err) {
    await db?.client.end();
    throw err;
  }
}

/** `schema` made in the bench's database: a connection to it, and the gateway's DATABASE_URL. */
async function schemaOf(databaseUrl, schema) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return { client, env: { DATABASE_URL: url.toString() } };
}

/**
 * The environment of a bench gateway in front of `agent`: its stores are the node's
 * `databaseUrl` and `redisUrl`, or embedded where they are undefined.
 */
export function benchGatewayEnv({ nodeId, token, databaseUrl, redisUrl }, agentAddress, options) {
  const { drivenLifecycle, gatewayEnv } = options;
  return {
    GATEWAY_HOST: '127.0.0.1',
    GATEWAY_PORT: '0',
    ...(databaseUrl === undefined
      ? { PGLITE_DATA_DIR: pgliteDir(nodeId) }
      : { DATABASE_URL: databaseUrl }),
    ...(redisUrl === undefined ? {} : { REDIS_URL: redisUrl }),
    AGENT_NODES: `${nodeId}=${agentAddress}`,
    INTERNAL_TOKEN: token,
    ADMIN_TOKEN: token,
    PREVIEW_DOMAIN,
    // The bench drives the lifecycle passes itself.
    ...(drivenLifecycle ? { SESSION_IDLE_AFTER_S: '1', SESSION_DEEP_SLEEP_AFTER_S: '2' } : {}),
    SESSION_SWEEP_INTERVAL_S: '3600',
    SESSION_SWEEP_AT_DEADLINES: 'false',
    ...gatewayEnv,
  };
}

/** The pool's idle fill for a stack: the agent's default, `BENCH_POOL_IDLE_PERCENT`, or none. */
function idlePercent(idleFill) {
  const percent = idleFill ? process.env.BENCH_POOL_IDLE_PERCENT : '0';
  return percent === undefined ? {} : { SANDBOX_POOL_IDLE_MEMORY_PERCENT: percent };
}

/** The environment of a bench agent: its node id, token, directories, pool and image. */
export function benchAgentEnv({ nodeId, token, pool, idleFill, extraAgentEnv }) {
  return {
    AGENT_PORT: '0',
    AGENT_PREVIEW_PORT: '0',
    NODE_ID: nodeId,
    INTERNAL_TOKEN: token,
    SANDBOX_WORKSPACE_DIR: `${BENCH_DIR}/${nodeId}`,
    PACKAGE_CACHE_DIR: `${BENCH_DIR}/${nodeId}-packages`,
    BLOB_STORE_DIR: `${BENCH_DIR}/${nodeId}-blobs`,
    SANDBOX_EGRESS_FIREWALL: EGRESS_FIREWALL,
    ...(pool === undefined ? {} : { SANDBOX_POOL: pool }),
    ...idlePercent(idleFill),
    // SANDBOX_RUNTIME=gvisor measures sandboxes on gVisor (baselines too: `runtime` below).
    ...(SANDBOX_RUNTIME === undefined ? {} : { SANDBOX_RUNTIME }),
    // The image ./scripts/build-sandbox-image built (its SANDBOX_IMAGE, default latest).
    ...(process.env.SANDBOX_IMAGE === undefined
      ? {}
      : { SANDBOX_IMAGE: process.env.SANDBOX_IMAGE }),
    ...extraAgentEnv,
    // No extra CA bundle, as in production without a TLS-inspecting proxy: with one, every
    // Node start in a sandbox builds its certificate store (~40 ms of CPU here).
  };
}
