// The service the soak (bench/soak.mjs) runs against, as deployed: agent, gateway and edge
// proxy each in a process of its own, their logs in files, their error lines counted.
import { createWriteStream, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { adminAccount, startServiceProcess } from './lib.mjs';

const require = createRequire(import.meta.url);
const { Client } = require('../services/gateway/node_modules/pg');

/** Where the services' logs go (SOAK_LOG_DIR, default .data/soak-logs), a file each. */
export const logDir =
  process.env.SOAK_LOG_DIR ??
  join(dirname(fileURLToPath(import.meta.url)), '..', '.data', 'soak-logs');
mkdirSync(logDir, { recursive: true });
const logFiles = {};

/** Error-level lines the services logged, counted by service and message. */
export const loggedErrors = new Map();
const onLog = (service) => (entry) => {
  logFiles[service] ??= createWriteStream(join(logDir, `${service}.log`));
  logFiles[service].write(`${JSON.stringify(entry)}\n`);
  if (entry.level < 50) return;
  const kind = `${service}: ${entry.msg}${entry.err?.message ? ` (${entry.err.message.slice(0, 80)})` : ''}`;
  loggedErrors.set(kind, (loggedErrors.get(kind) ?? 0) + 1);
};

async function resetDatabase(databaseUrl) {
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  await db.query('DROP SCHEMA IF EXISTS public CASCADE; CREATE SCHEMA public');
  await db.end();
}

/**
 * Starts agent, gateway and edge proxy, each a process of its own, on an emptied database, and
 * makes an enterprise account: `{ url, edgeUrl, key, processes }`.
 */
export async function startService(soak) {
  const { nodeId, token, dirs } = soak;
  await resetDatabase(soak.databaseUrl);
  const agent = await startServiceProcess(
    'services/agent',
    {
      AGENT_HOST: '127.0.0.1',
      AGENT_PORT: '0',
      AGENT_PREVIEW_PORT: '0',
      NODE_ID: nodeId,
      INTERNAL_TOKEN: token,
      SANDBOX_WORKSPACE_DIR: dirs.workspaces,
      PACKAGE_CACHE_DIR: dirs.packages,
      BLOB_STORE_DIR: dirs.blobs,
    },
    'agent listening',
    60_000,
    onLog('agent'),
  );
  const gateway = await startServiceProcess(
    'services/gateway',
    {
      GATEWAY_HOST: '127.0.0.1',
      GATEWAY_PORT: '0',
      DATABASE_URL: soak.databaseUrl,
      REDIS_URL: soak.redisUrl,
      AGENT_NODES: `${nodeId}=${agent.entry.address}`,
      INTERNAL_TOKEN: token,
      ADMIN_TOKEN: token,
      PREVIEW_DOMAIN: soak.previewDomain,
      SECRETS_KEY: randomBytes(32).toString('base64'),
      SESSION_IDLE_AFTER_S: String(soak.idleAfterS),
      SESSION_DEEP_SLEEP_AFTER_S: String(soak.deepSleepAfterS),
    },
    'gateway listening',
    60_000,
    onLog('gateway'),
  );
  const url = gateway.entry.url;
  const edge = await startServiceProcess(
    'services/edge-proxy',
    {
      EDGE_HOST: '127.0.0.1',
      EDGE_PORT: '0',
      PREVIEW_DOMAIN: soak.previewDomain,
      GATEWAY_INTERNAL_URL: url,
      INTERNAL_TOKEN: token,
    },
    'edge proxy listening',
    10_000,
    onLog('edge'),
  );
  const key = await adminAccount(url, token, 'soak');
  return {
    url,
    edgeUrl: edge.entry.url,
    key,
    processes: { agent: agent.child, gateway: gateway.child, edge: edge.child },
  };
}
