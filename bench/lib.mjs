// Shared by pnpm bench (bench.mjs) and pnpm bench:load (load.mjs): a whole stack (agent,
// gateway, edge proxy) on loopback, the agent in a process of its own as deployed (or in this
// process, for benches that drive it directly), an account with a key, timing helpers, and
// the JSON record of a run; processes.mjs starts the parts that run in processes of their
// own. The gateway's stores are embedded, as ./scripts/up runs it, unless BENCH_STORES=external
// (then BENCH_DATABASE_URL and BENCH_REDIS_URL, which ./scripts/bench sets).
import http from 'node:http';
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PREVIEW_DOMAIN, profileGateway, startAgentProcess, unmountUnder } from './processes.mjs';
import {
  BENCH_DIR,
  benchAgentEnv,
  benchGatewayEnv,
  benchStores,
  gatewayOfItsOwn,
  pgliteDir,
  SANDBOX_RUNTIME,
  STORES,
} from './stack-env.mjs';
import { machine } from './machine.mjs';
import { sleep } from './timing.mjs';
import { LiveStacks } from './live-stacks.mjs';

export { machine, machineBusyMs } from './machine.mjs';

export { SANDBOX_RUNTIME, STORES };
/** Docker's `HostConfig.Runtime` for a bare baseline container on the same runtime. */
export const runtime = SANDBOX_RUNTIME === undefined ? {} : { Runtime: SANDBOX_RUNTIME };

const require = createRequire(import.meta.url);
const { createDockerRuntime, startAgent } = require('../services/agent/dist/index.js');
const { startGateway } = require('../services/gateway/dist/index.js');
const { startEdgeProxy } = require('../services/edge-proxy/dist/index.js');
const {
  loadAgentConfig,
  loadEdgeProxyConfig,
  loadGatewayConfig,
} = require('../packages/config/dist/index.js');
const { createLogger } = require('../packages/logger/dist/index.js');
export const Docker = require('../services/agent/node_modules/dockerode');

export const docker = new Docker({ socketPath: '/var/run/docker.sock' });
const logger = createLogger({ name: 'bench', level: process.env.BENCH_LOG_LEVEL ?? 'silent' });

export {
  elapsedMs,
  measure,
  measureAlternated,
  openLoop,
  percentile,
  row,
  sleep,
} from './timing.mjs';
export {
  exited,
  PREVIEW_DOMAIN,
  startEdgeProcess,
  startHttpLoad,
  startServiceProcess,
} from './processes.mjs';

/** Runs `cmd` in the container through the Engine API and waits for it to end. */
export async function dockerExec(containerId, cmd) {
  const exec = await docker
    .getContainer(containerId)
    .exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true, User: '1000:1000' });
  const stream = await exec.start({ hijack: true, stdin: false });
  const chunks = [];
  stream.on('data', (c) => chunks.push(c));
  await new Promise((resolve) => {
    stream.on('end', resolve);
    stream.on('close', resolve);
  });
  return Buffer.concat(chunks).toString('latin1');
}

/**
 * `argv` run in the session's CPU group (ADR 20), as the session's own processes run, where
 * the sandbox has one: a `docker exec` alone would run it with the runner's CPU allowance.
 */
export const inSessionCpu = (argv) => [
  '/bin/sh',
  '-c',
  'if [ -e /run/sandbox/cpu.procs ]; then echo 0 >/run/sandbox/cpu.procs || exit 125; fi; exec "$@"',
  'sh',
  ...argv,
];

/**
 * One stack: agent (SANDBOX_POOL `pool`; unset: the agent's default, as ./scripts/up runs
 * it), gateway, edge proxy, an enterprise account's key.
 * Sessions go idle after the service's default delay, as users' do (activity is then written
 * in batches), unless `drivenLifecycle`: idle after 1 s, deep sleep after 2 s, for rows that
 * sweep sessions themselves. Transitions only happen when a row sweeps.
 * The pool grows in idle time (ADR 46) only with `idleFill` (the rows of the default node),
 * to the agent's default share or `BENCH_POOL_IDLE_PERCENT`: elsewhere members made in the
 * pauses between rows would take the CPU from the rows measured.
 * `agentProcess` and `gatewayProcess` run the agent and the gateway in processes of their own,
 * as ./scripts/up does (the gateway then logs each request at info to a file, as there);
 * otherwise they serve in this process (rows that drive the gateway's sweeps, or read its log
 * entries, need it here).
 */
export async function startBenchStack({
  pool,
  name = 'bench',
  gatewayEnv = {},
  agentProcess = false,
  gatewayProcess = false,
  idleFill = false,
  drivenLifecycle = false,
  agentEnv: extraAgentEnv = {},
  onAgentLog,
  gatewayLogger = logger,
}) {
  const { databaseUrl, redisUrl } = benchStores();
  const nodeId = `${name}-${randomBytes(4).toString('hex')}`;
  const stopProfile = gatewayProcess ? async () => undefined : await profileGateway(nodeId);
  // Searchable by others, as an agent makes the directories above its own: a remapped sandbox
  // root must pass it (ADR 32); an older run may have left it 0700.
  mkdirSync(BENCH_DIR, { recursive: true, mode: 0o711 });
  chmodSync(BENCH_DIR, 0o711);
  const token = randomBytes(16).toString('hex');
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const node = { nodeId, token, databaseUrl, redisUrl };
  const agentEnv = benchAgentEnv({ nodeId, token, pool, idleFill, extraAgentEnv });
  const agentConfig = loadAgentConfig(agentEnv);
  const { agent, runtime } = agentProcess
    ? { agent: await startAgentProcess(agentEnv, token, onAgentLog) }
    : await agentHere(agentConfig);
  const env = benchGatewayEnv(node, agent.address, { drivenLifecycle, gatewayEnv });
  const gateway = await (
    gatewayProcess
      ? gatewayOfItsOwn(node, env, schema)
      : startGateway({ config: loadGatewayConfig(env), logger: gatewayLogger, schema })
  ).catch(async (err) => {
    await agent.stop(); // its pool goes with it
    await removeNodeFiles(nodeId, agentConfig); // the gateway's log stays, for its error
    throw err;
  });
  const url = gateway.url;
  const edge = await startEdgeProxy({
    config: loadEdgeProxyConfig({
      EDGE_PORT: '0',
      PREVIEW_DOMAIN,
      GATEWAY_INTERNAL_URL: url,
      INTERNAL_TOKEN: token,
    }),
    logger,
  });
  const key = await adminAccount(url, token, 'bench');
  const stack = {
    nodeId,
    url,
    key,
    internalToken: token,
    edge,
    gateway,
    runtime,
    agentConfig,
    /** Members the pool keeps at least (the sizes of its shapes). */
    poolSize: agentConfig.pool.reduce((n, shape) => n + shape.size, 0),
    agentAddress: agent.address,
    /** The gateway's own process (undefined: it serves in this one). */
    gatewayPid: gateway.pid,
    api: (path, body) => api(url, key, path, body),
    ...poolWatch(runtime, agent),
    async deleteSession(id) {
      await fetch(`${url}/v1/sessions/${id}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${key}` },
      });
    },
    stop: () =>
      stopBenchStack({ nodeId, runtime, agent, edge, gateway, schema, agentConfig, stopProfile }),
  };
  return liveStacks().add(stack);
}

let live;
/** The stacks up, stopped on a ^C (live-stacks.mjs): listening from the first stack on. */
function liveStacks() {
  live ??= new LiveStacks().listen();
  return live;
}

/** A stack's agent and gateway each in a process of its own, as ./scripts/up runs them. */
export const AS_DEPLOYED = { agentProcess: true, gatewayProcess: true };

/** An agent serving in this process, and its runtime. */
async function agentHere(config) {
  const runtime = createDockerRuntime({ config, logger });
  return { agent: await startAgent({ config, logger, runtime }), runtime };
}

/** The pool's readiness and size, asked of the runtime in this process or of the agent's. */
function poolWatch(runtime, agent) {
  return {
    /** Resolves when the warm pool holds `size` ready members (`timeoutMs` at most). */
    async poolReady(size, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      const ready = async () =>
        runtime !== undefined
          ? runtime.poolStatus().reduce((n, s) => n + s.ready, 0)
          : (await agent.nodeInfo()).pool.reduce((n, s) => n + s.ready, 0);
      while ((await ready()) < size) {
        if (Date.now() > deadline) throw new Error('the warm pool did not fill');
        await sleep(20);
      }
    },
    /**
     * How many members the pool grows to in idle time (ADR 46): its target once the node has
     * served nothing for a while (10 s at most to show; its size where there is no idle fill).
     */
    async idlePoolTarget() {
      const deadline = Date.now() + 10_000;
      let target = await this.poolTarget();
      while (target <= this.poolSize && Date.now() < deadline) {
        await sleep(200);
        target = await this.poolTarget();
      }
      return target;
    },
    /** How many members the pool keeps now (it grows with demand). */
    async poolTarget() {
      const pool = runtime !== undefined ? runtime.poolStatus() : (await agent.nodeInfo()).pool;
      return pool.reduce((n, s) => n + (s.target || s.size), 0);
    },
  };
}

/**
 * An enterprise account whose limits stay out of the way, made through the admin API of the
 * gateway at `url` (its ADMIN_TOKEN `token`): its API key.
 */
export async function adminAccount(url, token, name) {
  const admin = async (path, body) => {
    const response = await fetch(`${url}/admin/v1${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`admin ${path}: ${response.status} ${await response.text()}`);
    return response.json();
  };
  const account = await admin('/accounts', {
    name,
    plan: 'enterprise',
    limits: { requestsPerMinute: 1_000_000, maxConcurrentSessions: 10_000 },
  });
  const { key } = await admin(`/accounts/${account.id}/keys`, { name });
  return key;
}

/** Destroys the bench's sessions, stops the stack, drops its schema and removes its files. */
async function stopBenchStack(parts) {
  const { nodeId, runtime, agent, edge, gateway, schema, agentConfig, stopProfile } = parts;
  const all = await docker.listContainers({
    all: true,
    filters: { label: [`io.sandbox.node=${nodeId}`] },
  });
  for (const c of all) {
    const id = (c.Names[0] ?? '').replace(/^\/sbx-/, '');
    if (!id.startsWith('ses_')) continue;
    const destroyed = runtime !== undefined ? runtime.destroy(id) : agent.destroy(id);
    await destroyed.catch(() => undefined);
  }
  await edge.stop();
  await stopProfile();
  // External stores: the stack's tables are a schema of the bench's database; embedded: files.
  if (STORES === 'external') await gateway.db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await gateway.stop();
  await agent.stop();
  await removeNodeFiles(nodeId, agentConfig);
}

/** What a stopped bench node leaves on the machine: its volumes, mounts and directories. */
async function removeNodeFiles(nodeId, agentConfig) {
  // The node's volumes (its npm cache) are named after the node: a bench node never returns.
  const { Volumes } = await docker.listVolumes({
    filters: { label: [`io.sandbox.node=${nodeId}`] },
  });
  for (const volume of Volumes ?? []) await docker.getVolume(volume.Name).remove();
  // The agent's disk store (ADR 43) stays mounted after it stops: it goes with the rest.
  await unmountUnder(agentConfig.workspaceDir);
  // What the agent kept on disk (its specs, extra CA bundle, package cache, blobs), and the
  // gateway's PGlite files where its stores were embedded.
  for (const dir of [
    agentConfig.workspaceDir,
    agentConfig.packageCacheDir,
    agentConfig.blobStoreDir,
    pgliteDir(nodeId),
  ]) {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The bench's API client: node:http on keep-alive connections. `fetch` (undici behind WHATWG
 * streams) took about twice the CPU per request, and the client shares the machine's two
 * cores with the service it measures.
 */
// An idle connection is dropped after 4 s, before the server's 5 s keep-alive timeout closes it
// under a request being sent.
const keepAlive = new http.Agent({ keepAlive: true, timeout: 4000 });

export function api(url, key, path, body) {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${url}/v1${path}`,
      {
        agent: keepAlive,
        method: payload === undefined ? 'GET' : 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          ...(payload === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
        },
      },
      (response) => {
        const chunks = [];
        response.on('data', (chunk) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const status = response.statusCode ?? 0;
          if (status < 200 || status >= 300) {
            reject(new Error(`${path}: ${status} ${text.slice(0, 200)}`));
          } else resolve(text);
        });
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

/**
 * The session's container (found by the name the agent gives it). A create from the warm pool
 * answers before its member takes the session's name: waits up to 10 s for it.
 */
export async function sessionContainer(sessionId) {
  for (const deadline = Date.now() + 10_000; ; await sleep(50)) {
    const [container] = await docker.listContainers({
      all: true,
      filters: { name: [`^/sbx-${sessionId}$`] },
    });
    if (container) return container;
    if (Date.now() > deadline) throw new Error(`no container for ${sessionId}`);
  }
}

/** Prints rows as a table: p50/p99 and, for each, its baseline's p50 and the ratio. */
export function printTable(title, rows) {
  const width = Math.max(...rows.map((r) => r.name.length), 9);
  console.log(`\n${title}`);
  console.log(`${'operation'.padEnd(width)}  rounds    p50 ms    p99 ms  baseline`);
  for (const r of rows) {
    const base = r.baseline
      ? `${(r.p50 / r.baseline.p50).toFixed(2)}× of "${r.baseline.name}"`
      : (r.note ?? '');
    const rate = r.perSecond ? `  ${r.perSecond.toFixed(0)}/s` : '';
    console.log(
      `${r.name.padEnd(width)}  ${String(r.rounds).padStart(6)}  ${r.p50.toFixed(1).padStart(8)}  ${r.p99.toFixed(1).padStart(8)}  ${base}${rate}`,
    );
  }
}

/**
 * Writes the run's rows as JSON (BENCH_JSON, default bench/results/<kind>.json, the runtime and
 * `external` added to the name where they are not the defaults).
 */
export async function writeJson(kind, rows) {
  const name = [kind, SANDBOX_RUNTIME, STORES === 'external' ? STORES : undefined]
    .filter((part) => part !== undefined)
    .join('-');
  const path =
    process.env.BENCH_JSON ??
    join(dirname(fileURLToPath(import.meta.url)), 'results', `${name}.json`);
  await mkdir(dirname(path), { recursive: true });
  const record = {
    kind,
    at: new Date().toISOString(),
    runtime: SANDBOX_RUNTIME ?? 'runc',
    stores: STORES,
    machine: machine(),
    rows: rows.map(({ baseline, ...r }) => ({ ...r, baseline: baseline?.name })),
  };
  await writeFile(path, `${JSON.stringify(record, null, 2)}\n`);
  console.log(`\nJSON: ${path}`);
}
