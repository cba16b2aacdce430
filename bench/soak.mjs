// pnpm soak (./scripts/soak): the whole service for SOAK_MINUTES (default 30) under mixed
// traffic, as deployed: agent, gateway and edge proxy each in a process of its own. Workers
// (SOAK_WORKERS, default 4) each go through session journeys until the time is up: create,
// write files, run a command, run code, stream a run, read a file back, start a web app and
// visit its preview, and some leave the session to go idle or into deep sleep (short delays)
// before using it again, then delete it. Reports errors by kind, p50/p99 per operation per
// window (SOAK_WINDOW_S, default 300), the RSS of the three processes over time, the error
// lines they logged (their whole logs go to SOAK_LOG_DIR), and at the end whether any container, disk image, loop device, mount,
// CPU group, saved workspace or firewall rule was left over. Loopback only; bounded in time
// (each operation times out after 60 s). Writes bench/results/soak.json (SOAK_JSON).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { docker, exited, machine, startServiceProcess } from './lib.mjs';
import { elapsedMs, percentile, sleep } from './timing.mjs';

const require = createRequire(import.meta.url);
const { Client } = require('../services/gateway/node_modules/pg');

const MINUTES = Number(process.env.SOAK_MINUTES ?? 30);
const WORKERS = Number(process.env.SOAK_WORKERS ?? 4);
const WINDOW_S = Number(process.env.SOAK_WINDOW_S ?? 300);
const IDLE_AFTER_S = 4;
const DEEP_SLEEP_AFTER_S = 10;
const OP_TIMEOUT_MS = 60_000;
const PREVIEW_DOMAIN = 'preview.soak';

const databaseUrl = process.env.SOAK_DATABASE_URL;
const redisUrl = process.env.SOAK_REDIS_URL;
if (!databaseUrl || !redisUrl) throw new Error('run through ./scripts/soak');

const nodeId = `soak-${randomBytes(4).toString('hex')}`;
const token = randomBytes(16).toString('hex');
const base = `/var/lib/sandbox-agent/soak/${nodeId}`;
const dirs = { workspaces: base, packages: `${base}-packages`, blobs: `${base}-blobs` };

// --- the service, three processes --------------------------------------------------------

/** Where the services' logs go (SOAK_LOG_DIR, default .data/soak-logs), a file each. */
const logDir =
  process.env.SOAK_LOG_DIR ??
  join(dirname(fileURLToPath(import.meta.url)), '..', '.data', 'soak-logs');
mkdirSync(logDir, { recursive: true });
const logFiles = {};

/** Error-level lines the services logged, counted by service and message. */
const loggedErrors = new Map();
const onLog = (service) => (entry) => {
  logFiles[service] ??= createWriteStream(join(logDir, `${service}.log`));
  logFiles[service].write(`${JSON.stringify(entry)}\n`);
  if (entry.level < 50) return;
  const kind = `${service}: ${entry.msg}${entry.err?.message ? ` (${entry.err.message.slice(0, 80)})` : ''}`;
  loggedErrors.set(kind, (loggedErrors.get(kind) ?? 0) + 1);
};

async function resetDatabase() {
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  await db.query('DROP SCHEMA IF EXISTS public CASCADE; CREATE SCHEMA public');
  await db.end();
}

async function startService() {
  await resetDatabase();
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
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      AGENT_NODES: `${nodeId}=${agent.entry.address}`,
      INTERNAL_TOKEN: token,
      ADMIN_TOKEN: token,
      PREVIEW_DOMAIN,
      SECRETS_KEY: randomBytes(32).toString('base64'),
      SESSION_IDLE_AFTER_S: String(IDLE_AFTER_S),
      SESSION_DEEP_SLEEP_AFTER_S: String(DEEP_SLEEP_AFTER_S),
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
      PREVIEW_DOMAIN,
      GATEWAY_INTERNAL_URL: url,
      INTERNAL_TOKEN: token,
    },
    'edge proxy listening',
    10_000,
    onLog('edge'),
  );
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
    name: 'soak',
    plan: 'enterprise',
    limits: { requestsPerMinute: 1_000_000, maxConcurrentSessions: 10_000 },
  });
  const { key } = await admin(`/accounts/${account.id}/keys`, { name: 'soak' });
  return {
    url,
    edgeUrl: edge.entry.url,
    key,
    processes: { agent: agent.child, gateway: gateway.child, edge: edge.child },
  };
}

// --- measurements ------------------------------------------------------------------------

const startedAt = Date.now();
const windowOf = (at) => Math.floor((at - startedAt) / (WINDOW_S * 1000));
/** Latencies by window, then operation. */
const latencies = new Map();
/** Error counts by `operation: kind`. */
const errors = new Map();
const rssSamples = [];

function record(op, ms) {
  const window = windowOf(Date.now());
  if (!latencies.has(window)) latencies.set(window, new Map());
  const ops = latencies.get(window);
  if (!ops.has(op)) ops.set(op, []);
  ops.get(op).push(ms);
}

function countError(op, kind) {
  const key = `${op}: ${kind}`;
  errors.set(key, (errors.get(key) ?? 0) + 1);
}

class OpError extends Error {}

/** Times `fn` as `op`; a failure is counted by kind and ends the journey (rethrown). */
async function timed(op, fn) {
  const started = process.hrtime.bigint();
  try {
    const result = await fn(AbortSignal.timeout(OP_TIMEOUT_MS));
    record(op, elapsedMs(started));
    return result;
  } catch (err) {
    const kind =
      err instanceof OpError
        ? err.message
        : err.name === 'TimeoutError'
          ? 'timed out (60 s)'
          : `network: ${err.cause?.code ?? err.code ?? err.message}`;
    countError(op, kind);
    throw new OpError(kind);
  }
}

function rssKb(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  } catch {
    return 0;
  }
}

// --- the API -----------------------------------------------------------------------------

async function call(service, method, path, body, signal) {
  const response = await fetch(`${service.url}/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${service.key}`,
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    ...(body ? { body: JSON.stringify(body) } : {}),
    signal,
  });
  const text = await response.text();
  if (!response.ok) {
    let code = '';
    try {
      code = JSON.parse(text).error?.code ?? '';
    } catch {
      // not JSON
    }
    throw new OpError(`${response.status} ${code}`.trim());
  }
  return text;
}

const json = async (promise) => JSON.parse(await promise);

function expectOutput(actual, wanted) {
  if (actual !== wanted) throw new OpError('wrong output');
}

/** A streamed run's events: `{ event, data }` each. */
function sseEvents(text) {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('\n');
      return { event, data };
    });
}

function previewGet(service, sessionId, path, signal) {
  const edge = new URL(service.edgeUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: edge.hostname,
        port: edge.port,
        path,
        signal,
        headers: { host: `${sessionId.replace('_', '-')}.${PREVIEW_DOMAIN}` },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode, body }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

// --- the journeys ------------------------------------------------------------------------

const live = new Set();
let journeys = 0;

const PREVIEW_APP =
  "require('http').createServer((q, s) => s.end('soak ' + q.url)).listen(3000, '0.0.0.0')";

async function journey(service, n) {
  const run = (body, signal) => json(call(service, 'POST', '/execute', body, signal));
  const id = await timed('create', async (signal) => {
    const created = await json(call(service, 'POST', '/sessions/create', {}, signal));
    return created.sessionId;
  });
  live.add(id);
  try {
    const content = `journey ${n} ${randomBytes(512).toString('hex')}`;
    await timed('files.write', (signal) =>
      call(service, 'POST', '/files/write', { sessionId: id, path: 'data/a.txt', content }, signal),
    );
    await timed('run.command', async (signal) => {
      const { stdout } = await run({ sessionId: id, command: 'wc -c < data/a.txt' }, signal);
      expectOutput(stdout.trim(), String(content.length));
    });
    await timed('run.code', async (signal) => {
      const { stdout } = await run(
        {
          sessionId: id,
          code: "console.log(require('fs').readFileSync('data/a.txt', 'utf8').split(' ')[1])",
        },
        signal,
      );
      expectOutput(stdout, `${n}\n`);
    });
    await timed('run.stream', async (signal) => {
      const text = await call(
        service,
        'POST',
        '/execute',
        { sessionId: id, command: 'for i in $(seq 1 300); do echo line-$i; done', stream: true },
        signal,
      );
      const events = sseEvents(text);
      const last = events.at(-1);
      if (last?.event !== 'result') throw new OpError(`stream ended with ${last?.event}`);
      const lines = events
        .filter((e) => e.event === 'stdout')
        .map((e) => JSON.parse(e.data).data ?? '')
        .join('');
      expectOutput(lines.split('\n').length, 301);
    });
    await timed('files.read', async (signal) => {
      const body = await call(
        service,
        'GET',
        `/files/read?sessionId=${id}&path=${encodeURIComponent('data/a.txt')}`,
        undefined,
        signal,
      );
      expectOutput(body, content);
    });
    await timed('preview.start', (signal) =>
      run(
        {
          sessionId: id,
          command: `nohup node -e "${PREVIEW_APP}" >/dev/null 2>&1 & for i in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/3000) 2>/dev/null && break; sleep 0.1; done`,
        },
        signal,
      ),
    );
    for (let i = 0; i < 5; i += 1) {
      await timed('preview.get', async (signal) => {
        const { status, body } = await previewGet(service, id, `/p${i}`, signal);
        if (status !== 200) throw new OpError(`${status}`);
        expectOutput(body, `soak /p${i}`);
      });
    }
    // A third of the sessions wait to go idle, a third to go into deep sleep, then come back.
    const rest = n % 3;
    if (rest === 1) {
      await sleep((IDLE_AFTER_S + 2) * 1000);
      await timed('run.after-idle', async (signal) => {
        const { stdout } = await run({ sessionId: id, command: 'cat data/a.txt' }, signal);
        expectOutput(stdout, content);
      });
    } else if (rest === 2) {
      await sleep((DEEP_SLEEP_AFTER_S + 3) * 1000);
      const { state } = await timed('session.get', (signal) =>
        json(call(service, 'GET', `/sessions/${id}`, undefined, signal)),
      );
      if (state !== 'deep-sleep') countError('session.get', `state ${state}, not deep-sleep`);
      await timed('run.after-deep-sleep', async (signal) => {
        const { stdout } = await run({ sessionId: id, command: 'cat data/a.txt' }, signal);
        expectOutput(stdout, content);
      });
    }
  } finally {
    await timed('delete', (signal) => call(service, 'DELETE', `/sessions/${id}`, undefined, signal))
      .then(() => live.delete(id))
      .catch(() => undefined);
  }
}

async function worker(service, deadline) {
  while (Date.now() < deadline) {
    journeys += 1;
    await journey(service, journeys).catch(() => undefined);
  }
}

// --- leftovers ---------------------------------------------------------------------------

/** The filter table and the nat table, without counters. */
function firewallRules() {
  return ['filter', 'nat']
    .map((table) => execFileSync('iptables-save', ['-t', table], { encoding: 'utf8' }))
    .join('')
    .split('\n')
    .filter((line) => !line.startsWith('#'))
    .map((line) => line.replace(/\[\d+:\d+\]/g, ''))
    .join('\n');
}

async function leftovers(rulesBefore) {
  const found = {};
  const containers = await docker.listContainers({
    all: true,
    filters: { label: [`io.sandbox.node=${nodeId}`] },
  });
  found.containers = containers.map((c) => c.Names[0]);
  const files = (dir) => (existsSync(dir) ? readdirSync(dir, { recursive: true }) : []);
  found.diskImages = files(dirs.workspaces).filter((f) => String(f).endsWith('.ext4'));
  found.sessionSpecs = files(join(dirs.workspaces, '.specs'));
  found.savedWorkspaces = existsSync(dirs.blobs)
    ? readdirSync(dirs.blobs, { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => join(entry.parentPath ?? entry.path, entry.name))
    : [];
  found.loopDevices = execFileSync('losetup', ['-a'], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(dirs.workspaces));
  found.mounts = readFileSync('/proc/mounts', 'utf8')
    .split('\n')
    .filter((line) => line.split(' ')[1]?.startsWith(dirs.workspaces));
  found.cpuGroups = files(`/sys/fs/cgroup/cpu/sandbox/io.sandbox.${nodeId}`).filter(
    (f) => !String(f).includes('/') && !String(f).includes('.'),
  );
  const rulesAfter = firewallRules().split('\n');
  const before = new Set(rulesBefore.split('\n'));
  const after = new Set(rulesAfter);
  found.firewallRulesAdded = rulesAfter.filter((r) => !before.has(r));
  found.firewallRulesRemoved = [...before].filter((r) => !after.has(r));
  return found;
}

// --- report ------------------------------------------------------------------------------

function windowsReport() {
  const rows = [];
  for (const [window, ops] of [...latencies].sort((a, b) => a[0] - b[0])) {
    for (const [op, times] of [...ops].sort()) {
      times.sort((a, b) => a - b);
      rows.push({
        window,
        from: `${(window * WINDOW_S) / 60} min`,
        op,
        count: times.length,
        p50: Math.round(percentile(times, 50) * 10) / 10,
        p99: Math.round(percentile(times, 99) * 10) / 10,
      });
    }
  }
  return rows;
}

function rssReport() {
  const byWindow = new Map();
  for (const sample of rssSamples) {
    const window = windowOf(sample.at);
    const max = byWindow.get(window) ?? { agent: 0, gateway: 0, edge: 0 };
    for (const name of ['agent', 'gateway', 'edge']) max[name] = Math.max(max[name], sample[name]);
    byWindow.set(window, max);
  }
  return [...byWindow].map(([window, max]) => ({
    window,
    from: `${(window * WINDOW_S) / 60} min`,
    agentMb: Math.round(max.agent / 1024),
    gatewayMb: Math.round(max.gateway / 1024),
    edgeMb: Math.round(max.edge / 1024),
  }));
}

async function main() {
  console.log(`soak: ${MINUTES} min, ${WORKERS} workers, node ${nodeId}`);
  const service = await startService();
  // The host set-up is done once the agent listens: what is there now must be there after.
  const rulesBefore = firewallRules();
  const sampler = setInterval(() => {
    const { agent, gateway, edge } = service.processes;
    rssSamples.push({
      at: Date.now(),
      agent: rssKb(agent.pid),
      gateway: rssKb(gateway.pid),
      edge: rssKb(edge.pid),
    });
  }, 10_000);
  const progress = setInterval(() => {
    const failed = [...errors.values()].reduce((a, b) => a + b, 0);
    console.log(
      `${((Date.now() - startedAt) / 60_000).toFixed(1)} min: ${journeys} journeys, ${failed} errors, ${live.size} sessions live`,
    );
  }, 60_000);
  const deadline = startedAt + MINUTES * 60_000;
  await Promise.all(Array.from({ length: WORKERS }, () => worker(service, deadline)));
  clearInterval(progress);
  clearInterval(sampler);
  const ranMin = (Date.now() - startedAt) / 60_000;

  // Sessions whose delete failed: deleted again, then the services stopped as their service
  // manager would (the agent removes its warm pool on the way).
  const undeleted = [...live];
  for (const id of undeleted) {
    await call(service, 'DELETE', `/sessions/${id}`).catch(() => undefined);
  }
  await sleep(2000);
  const { agent, gateway, edge } = service.processes;
  for (const child of [edge, gateway, agent]) await exited(child, 'SIGTERM');
  const left = await leftovers(rulesBefore);

  const report = {
    kind: 'soak',
    at: new Date().toISOString(),
    machine: machine(),
    minutes: Math.round(ranMin * 10) / 10,
    workers: WORKERS,
    windowS: WINDOW_S,
    journeys,
    errors: Object.fromEntries([...errors].sort()),
    loggedErrors: Object.fromEntries([...loggedErrors].sort()),
    undeletedAtEnd: undeleted.length,
    latencies: windowsReport(),
    rss: rssReport(),
    rssSamples,
    leftovers: left,
  };
  console.log(`\n${journeys} journeys in ${report.minutes} min`);
  console.log('\nerrors by kind:', errors.size === 0 ? 'none' : '');
  for (const [kind, count] of [...errors].sort()) console.log(`  ${count}  ${kind}`);
  console.log('\nerror lines logged by the services:', loggedErrors.size === 0 ? 'none' : '');
  for (const [kind, count] of [...loggedErrors].sort()) console.log(`  ${count}  ${kind}`);
  console.log('\nlatency by window (ms):');
  for (const r of report.latencies) {
    console.log(
      `  ${r.from.padStart(7)}  ${r.op.padEnd(22)} ${String(r.count).padStart(5)}  p50 ${String(r.p50).padStart(7)}  p99 ${String(r.p99).padStart(7)}`,
    );
  }
  console.log('\nRSS by window (max, MB):');
  for (const r of report.rss) {
    console.log(
      `  ${r.from.padStart(7)}  agent ${r.agentMb}  gateway ${r.gatewayMb}  edge ${r.edgeMb}`,
    );
  }
  console.log('\nleft over after the end:');
  let clean = true;
  for (const [what, items] of Object.entries(left)) {
    if (items.length > 0) clean = false;
    console.log(`  ${what}: ${items.length === 0 ? 'none' : JSON.stringify(items)}`);
  }
  const path =
    process.env.SOAK_JSON ?? join(dirname(fileURLToPath(import.meta.url)), 'results', 'soak.json');
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`\nJSON: ${path}\nservice logs: ${logDir}`);
  for (const dir of Object.values(dirs)) await rm(dir, { recursive: true, force: true });
  if (!clean) process.exitCode = 1;
}

await main();
