// pnpm bench: latency of the whole stack (HTTP → gateway → gRPC → agent → runner → process)
// next to the baselines a bare `docker exec` and a direct spawn inside the container, and
// preview traffic through the edge proxy next to requests straight to the container.
// Needs what the tests need (./scripts/bench starts it): BENCH_DATABASE_URL, BENCH_REDIS_URL.
// BENCH_EGRESS_FIREWALL=off starts the agent without its egress firewall (whose setup flushes
// iptables chains that other agents on this Docker engine use).
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { cpus, totalmem } from 'node:os';

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
const Docker = require('../services/agent/node_modules/dockerode');

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 100);
const WAKE_ROUNDS = Number(process.env.BENCH_WAKE_ROUNDS ?? 8);
const EGRESS_FIREWALL = process.env.BENCH_EGRESS_FIREWALL ?? 'on';
// Load for the throughput rows: this many keep-alive clients, until either bound is reached.
const LOAD_CLIENTS = 16;
const LOAD_MAX_REQUESTS = 3000;
const LOAD_MAX_MS = 3000;
const PREVIEW_DOMAIN = 'preview.bench';
const PREVIEW_PORT = 3000;
const logger = createLogger({ name: 'bench', level: 'silent' });
const docker = new Docker({ socketPath: '/var/run/docker.sock' });
const nodeId = `bench-${randomBytes(4).toString('hex')}`;
const token = randomBytes(16).toString('hex');
const schema = `bench_${randomBytes(4).toString('hex')}`;

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** A table row from latencies in ms (sorts `times`). */
function row(name, rounds, times) {
  times.sort((a, b) => a - b);
  return { name, rounds, p50: percentile(times, 50), p99: percentile(times, 99) };
}

async function measure(name, rounds, fn) {
  for (let i = 0; i < Math.min(5, rounds); i += 1) await fn(); // warm up
  const times = [];
  for (let i = 0; i < rounds; i += 1) {
    const started = process.hrtime.bigint();
    await fn();
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return row(name, rounds, times);
}

/**
 * LOAD_CLIENTS concurrent callers of `fn` until LOAD_MAX_REQUESTS have been sent or
 * LOAD_MAX_MS have passed; requests per second and latencies.
 */
async function throughput(name, fn) {
  await Promise.all(Array.from({ length: LOAD_CLIENTS }, () => fn())); // open the connections
  const times = [];
  let sent = 0;
  const started = process.hrtime.bigint();
  const deadline = performance.now() + LOAD_MAX_MS;
  const client = async () => {
    while (sent < LOAD_MAX_REQUESTS && performance.now() < deadline) {
      sent += 1;
      const begun = process.hrtime.bigint();
      await fn();
      times.push(Number(process.hrtime.bigint() - begun) / 1e6);
    }
  };
  await Promise.all(Array.from({ length: LOAD_CLIENTS }, client));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { ...row(name, times.length, times), perSecond: times.length / seconds };
}

/** GET / on `origin` (optionally with another Host header); fails unless it answers 200 "ok". */
function httpGet(agent, origin, host) {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent,
        host: origin.hostname,
        port: origin.port,
        path: '/',
        headers: host ? { host } : {},
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () =>
          res.statusCode === 200 && body === 'ok'
            ? resolve()
            : reject(
                new Error(`GET ${host ?? origin.host}: ${res.statusCode} ${body.slice(0, 200)}`),
              ),
        );
      },
    );
    req.setTimeout(5000, () => req.destroy(new Error(`GET ${host ?? origin.host}: timed out`)));
    req.on('error', reject);
    req.end();
  });
}

async function api(url, key, path, body) {
  const response = await fetch(`${url}/v1${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${path}: ${response.status} ${text.slice(0, 200)}`);
  return text;
}

/** Runs `cmd` in the container through the Engine API and waits for it to end. */
async function dockerExec(containerId, cmd) {
  const exec = await docker
    .getContainer(containerId)
    .exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true, User: '1000:1000' });
  const stream = await exec.start({ hijack: true, stdin: false });
  await new Promise((resolve) => {
    stream.on('end', resolve);
    stream.on('close', resolve);
    stream.resume();
  });
  return exec;
}

async function main() {
  const databaseUrl = process.env.BENCH_DATABASE_URL;
  const redisUrl = process.env.BENCH_REDIS_URL;
  if (!databaseUrl || !redisUrl)
    throw new Error('run through ./scripts/bench (BENCH_DATABASE_URL, BENCH_REDIS_URL)');
  const agentConfig = loadAgentConfig({
    AGENT_PORT: '0',
    AGENT_PREVIEW_PORT: '0',
    NODE_ID: nodeId,
    INTERNAL_TOKEN: token,
    SANDBOX_WORKSPACE_DIR: `/var/lib/sandbox-agent/bench/${nodeId}`,
    PACKAGE_CACHE_DIR: `/var/lib/sandbox-agent/bench/${nodeId}-packages`,
    SANDBOX_EGRESS_FIREWALL: EGRESS_FIREWALL,
  });
  const runtime = createDockerRuntime({ config: agentConfig, logger });
  const agent = await startAgent({ config: agentConfig, logger, runtime });
  const gateway = await startGateway({
    config: loadGatewayConfig({
      GATEWAY_PORT: '0',
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      AGENT_NODES: `${nodeId}=${agent.address}`,
      INTERNAL_TOKEN: token,
      ADMIN_TOKEN: token,
      PREVIEW_DOMAIN,
      // The bench drives the lifecycle passes itself.
      SESSION_IDLE_AFTER_S: '1',
      SESSION_DEEP_SLEEP_AFTER_S: '2',
      SESSION_SWEEP_INTERVAL_S: '3600',
    }),
    logger,
    schema,
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
  const edgeClients = new Agent({ keepAlive: true, maxSockets: LOAD_CLIENTS });
  const directClients = new Agent({ keepAlive: true, maxSockets: LOAD_CLIENTS });
  const admin = (path, body) =>
    fetch(`${url}/admin/v1${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then((r) => r.json());
  const account = await admin('/accounts', {
    name: 'bench',
    plan: 'enterprise',
    limits: { requestsPerMinute: 1_000_000, maxConcurrentSessions: 10_000 },
  });
  const { key } = await admin(`/accounts/${account.id}/keys`, { name: 'bench' });
  const created = [];
  const results = [];
  const loads = [];
  try {
    results.push(
      await measure('session create', Math.min(ROUNDS, 40), async () => {
        created.push(JSON.parse(await api(url, key, '/sessions/create', {})).sessionId);
      }),
    );
    const sessionId = JSON.parse(await api(url, key, '/sessions/create', {})).sessionId;
    const [container] = await docker.listContainers({
      filters: { name: [`^/sbx-${sessionId}$`] },
    });
    const oneMb = 'x'.repeat(1024 * 1024);

    const stackTrue = await measure('execute command "true" (whole stack)', ROUNDS, () =>
      api(url, key, '/execute', { sessionId, command: 'true' }),
    );
    results.push(stackTrue);
    results.push(
      await measure('execute code console.log(1)', Math.min(ROUNDS, 40), () =>
        api(url, key, '/execute', { sessionId, code: 'console.log(1)' }),
      ),
    );
    results.push(
      await measure('first streamed byte (echo)', ROUNDS, async () => {
        const response = await fetch(`${url}/v1/execute`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ sessionId, command: 'echo hi; sleep 0.05', stream: true }),
        });
        const reader = response.body.getReader();
        let text = '';
        while (!text.includes('event: stdout')) {
          const { value, done } = await reader.read();
          if (done) break;
          text += new TextDecoder().decode(value);
        }
        await reader.cancel();
      }),
    );
    results.push(
      await measure('file write 1 MB', ROUNDS, () =>
        api(url, key, '/files/write', { sessionId, path: 'bench.txt', content: oneMb }),
      ),
    );
    results.push(
      await measure('file read 1 MB', ROUNDS, () =>
        api(url, key, `/files/read?sessionId=${sessionId}&path=bench.txt`),
      ),
    );
    const bare = await measure('baseline: docker exec "true" (Engine API)', ROUNDS, () =>
      dockerExec(container.Id, ['true']),
    );
    results.push(bare);
    // A direct spawn inside the container: node spawning `true` ROUNDS times, timed in there.
    const script = `const {spawnSync}=require('child_process');const t=[];for(let i=0;i<${ROUNDS};i++){const s=process.hrtime.bigint();spawnSync('true');t.push(Number(process.hrtime.bigint()-s)/1e6)}t.sort((a,b)=>a-b);console.log(JSON.stringify({p50:t[Math.floor(t.length/2)],p99:t[Math.min(t.length-1,Math.floor(t.length*0.99))]}))`;
    const exec = await docker
      .getContainer(container.Id)
      .exec({ Cmd: ['node', '-e', script], AttachStdout: true, User: '1000:1000' });
    const stream = await exec.start({ hijack: true, stdin: false });
    const chunks = [];
    stream.on('data', (c) => chunks.push(c));
    await new Promise((resolve) => stream.on('end', resolve));
    const json = Buffer.concat(chunks)
      .toString('latin1')
      .replace(/[^\x20-\x7e]/g, '')
      .match(/\{.*\}/)[0];
    results.push({
      name: 'baseline: direct spawn of "true" in the container',
      rounds: ROUNDS,
      ...JSON.parse(json),
    });

    // Previews: a tiny app on port 3000 of the session, through the edge proxy (which asks the
    // gateway for the route on every request) and straight to the container's bridge address.
    await api(url, key, '/execute', {
      sessionId,
      command: `nohup node -e "require('http').createServer((q,s)=>s.end('ok')).listen(${PREVIEW_PORT})" >/dev/null 2>&1 & for i in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/${PREVIEW_PORT}) 2>/dev/null && break; sleep 0.1; done`,
    });
    const inspected = await docker.getContainer(container.Id).inspect();
    const ip = inspected.NetworkSettings.Networks[agentConfig.sandboxNetwork]?.IPAddress;
    if (!ip) throw new Error(`no address on ${agentConfig.sandboxNetwork} for ${container.Id}`);
    const edgeOrigin = new URL(edge.url);
    const previewHost = `${sessionId.replace('_', '-')}.${PREVIEW_DOMAIN}`;
    const directOrigin = new URL(`http://${ip}:${PREVIEW_PORT}`);
    const throughEdge = () => httpGet(edgeClients, edgeOrigin, previewHost);
    const direct = () => httpGet(directClients, directOrigin);
    results.push(await measure('preview GET through edge proxy', ROUNDS, throughEdge));
    results.push(await measure('direct GET to the container', ROUNDS, direct));
    loads.push(await throughput('preview GET through edge proxy', throughEdge));
    loads.push(await throughput('direct GET to the container', direct));

    // Wakes: the first request after idle (unpause) and after deep sleep (restore 100 MB).
    // Only the measured session may be due meanwhile.
    for (const id of created.splice(0)) {
      await fetch(`${url}/v1/sessions/${id}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${key}` },
      });
    }
    await fetch(`${url}/v1/sessions/${sessionId}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${key}` },
    });
    const sleepy = JSON.parse(await api(url, key, '/sessions/create', {})).sessionId;
    await api(url, key, '/execute', {
      sessionId: sleepy,
      command: 'head -c 100000000 /dev/urandom > data.bin',
    });
    const wake = async (name, waitMs, expectField) => {
      const times = [];
      for (let i = 0; i < WAKE_ROUNDS; i += 1) {
        await new Promise((resolve) => setTimeout(resolve, waitMs));
        const pass = await gateway.sweeper.sweep();
        if (!pass[expectField].includes(sleepy))
          throw new Error(
            `${name}: session did not go to ${expectField}: ${JSON.stringify(pass)} ${sleepy}`,
          );
        const started = process.hrtime.bigint();
        await api(url, key, '/execute', { sessionId: sleepy, command: 'true' });
        times.push(Number(process.hrtime.bigint() - started) / 1e6);
      }
      return row(name, WAKE_ROUNDS, times);
    };
    results.push(await wake('wake from idle (first request)', 1100, 'idled'));
    results.push(await wake('wake from deep sleep, 100 MB workspace', 2100, 'slept'));

    const width = Math.max(...results.map((r) => r.name.length));
    console.log(
      `\nMachine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
    );
    console.log(`${'operation'.padEnd(width)}  rounds    p50 ms    p99 ms   p50 vs docker exec`);
    for (const r of results) {
      const ratio = (r.p50 / bare.p50).toFixed(2);
      console.log(
        `${r.name.padEnd(width)}  ${String(r.rounds).padStart(6)}  ${r.p50.toFixed(1).padStart(8)}  ${r.p99.toFixed(1).padStart(8)}   ${ratio}×`,
      );
    }
    const loadWidth = Math.max(...loads.map((r) => r.name.length));
    console.log(
      `\nThroughput: ${LOAD_CLIENTS} keep-alive clients, at most ${LOAD_MAX_REQUESTS} requests or ${LOAD_MAX_MS / 1000} s`,
    );
    console.log(`${'operation'.padEnd(loadWidth)}  requests     req/s    p50 ms    p99 ms`);
    for (const r of loads) {
      console.log(
        `${r.name.padEnd(loadWidth)}  ${String(r.rounds).padStart(8)}  ${r.perSecond.toFixed(0).padStart(8)}  ${r.p50.toFixed(1).padStart(8)}  ${r.p99.toFixed(1).padStart(8)}`,
      );
    }
    const verdict = stackTrue.p50 < bare.p50 ? 'faster' : 'slower';
    console.log(
      `\nWhole-stack "true" is ${verdict} than a bare docker exec (p50 ${stackTrue.p50.toFixed(1)} ms vs ${bare.p50.toFixed(1)} ms).`,
    );
  } finally {
    for (const id of created)
      await fetch(`${url}/v1/sessions/${id}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${key}` },
      });
    const all = await docker.listContainers({
      all: true,
      filters: { label: [`io.sandbox.node=${nodeId}`] },
    });
    for (const c of all) {
      const id = (c.Names[0] ?? '').replace(/^\/sbx-/, '');
      if (id.startsWith('ses_')) await runtime.destroy(id).catch(() => undefined);
    }
    edgeClients.destroy();
    directClients.destroy();
    await edge.stop();
    await gateway.db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await gateway.stop();
    await agent.stop();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
