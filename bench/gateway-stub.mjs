// pnpm bench:gateway: the gateway's own part of a run, without a sandbox. The gateway (with
// Postgres and Redis, as deployed) runs in this process in front of a stub agent in a child
// process that answers every `Exec` at once, as the agent answers a run that printed nothing
// (its result, then the call's status); the bench's HTTP client runs here too. Rows: `true`
// one at a time in one session (BENCH_GW_RUNS), and from BENCH_GW_SESSIONS sessions at once
// (BENCH_GW_RUNS × 3 in all): the p50, p99, runs/s, and this process's CPU per run (the
// gateway and the client; the stub's is apart). BENCH_GW_ROUNDS repeats the rows (the median
// is printed); BENCH_CPU_PROF=<dir> profiles this process (the gateway, its client);
// BENCH_GW_EVENTS=echo has the stub answer as for `echo hi` (three messages in turns of their
// own, as a real run's come) rather than with a result alone.
// Baselines, in the same run and rounds (transport-floor.mjs): the same rows served by a bare
// node:http server (`http`), the stub's `Exec` called alone (`grpc`), and a bare server that
// calls `Exec` per request (`http+grpc`): the gateway's transports without the gateway.
// Loopback only. Needs BENCH_DATABASE_URL and BENCH_REDIS_URL (./scripts/bench gateway).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { adminAccount, api, percentile } from './lib.mjs';
import { profileGateway } from './processes.mjs';
import { closedLoopOf } from './timing.mjs';
import { bareServer, stubExec } from './transport-floor.mjs';

const RUNS = Number(process.env.BENCH_GW_RUNS ?? 3000);
const SESSIONS = Number(process.env.BENCH_GW_SESSIONS ?? 30);
const ROUNDS = Number(process.env.BENCH_GW_ROUNDS ?? 3);
const STUB = fileURLToPath(new URL('./gateway-stub-agent.mjs', import.meta.url));

const require = createRequire(import.meta.url);
const { startGateway } = require('../services/gateway/dist/index.js');
const { loadGatewayConfig } = require('../packages/config/dist/index.js');
const { createLogger } = require('../packages/logger/dist/index.js');

/** The stub agent's process; resolves with its address once it listens. */
function startStub(nodeId, token) {
  const child = spawn(process.execPath, [STUB], {
    env: { ...process.env, NODE_ID: nodeId, INTERNAL_TOKEN: token },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the stub agent exited (${code})`)));
    child.stdout.once('data', (line) =>
      resolve({ address: line.toString().trim(), stop: () => child.kill() }),
    );
  });
}

/** `runs` runs of `true` from `sessions` clients at once: times, rate, this process's CPU. */
function row(url, key, sessionIds, runs) {
  return timedRow(sessionIds, runs, (sessionId) =>
    api(url, key, '/execute', { sessionId, command: 'true' }),
  );
}

/** `runs` calls of `run` from `sessionIds.length` clients at once: times, rate, CPU per call. */
async function timedRow(sessionIds, runs, run) {
  const cpu = process.cpuUsage();
  const { times, seconds } = await closedLoopOf(sessionIds, runs, run);
  const used = process.cpuUsage(cpu);
  return {
    p50: percentile(times, 50),
    p99: percentile(times, 99),
    perSecond: times.length / seconds,
    cpuMsPerRun: (used.user + used.system) / 1000 / times.length,
  };
}

/** One round of both rows: one client, then SESSIONS at once (RUNS × 3 in all). */
async function rowPair(measure, ids) {
  return { one: await measure(ids.slice(0, 1), RUNS), many: await measure(ids, RUNS * 3) };
}

/** The median of each row's rounds, named as the report names them. */
const rowSummaries = (list) => ({
  oneAtATime: summary(list.map((r) => r.one)),
  [`${SESSIONS}AtOnce`]: summary(list.map((r) => r.many)),
});

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

function summary(rounds) {
  const out = {};
  for (const field of ['p50', 'p99', 'perSecond', 'cpuMsPerRun']) {
    const values = rounds.map((r) => r[field]);
    out[field] = Number(median(values).toFixed(3));
    out[`${field}All`] = values.map((v) => Number(v.toFixed(3)));
  }
  return out;
}

async function main() {
  const nodeId = `gwbench-${randomBytes(4).toString('hex')}`;
  const token = randomBytes(16).toString('hex');
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const stub = await startStub(nodeId, token);
  const stopProfile = await profileGateway(nodeId);
  const gateway = await startGateway({
    config: loadGatewayConfig({
      GATEWAY_PORT: '0',
      DATABASE_URL: process.env.BENCH_DATABASE_URL,
      REDIS_URL: process.env.BENCH_REDIS_URL,
      AGENT_NODES: `${nodeId}=${stub.address}`,
      INTERNAL_TOKEN: token,
      ADMIN_TOKEN: token,
      SESSION_SWEEP_INTERVAL_S: '3600',
      SESSION_SWEEP_AT_DEADLINES: 'false',
    }),
    logger: createLogger({ name: 'bench', level: process.env.BENCH_LOG_LEVEL ?? 'silent' }),
    schema,
  });
  // The machine's load as the rows begin: their figures mean little on a busy machine.
  const load = loadavg().map((l) => l.toFixed(2));
  const report = { load: load.join(' '), rows: {}, baselines: {}, overFloor: {} };
  try {
    const key = await adminAccount(gateway.url, token, 'bench');
    const ids = [];
    for (let i = 0; i < SESSIONS; i += 1) {
      const created = await api(gateway.url, key, '/sessions/create', {});
      ids.push(JSON.parse(created).sessionId);
    }
    await row(gateway.url, key, ids, 2000); // warm-up
    const exec = stubExec(stub.address, token);
    const bare = await bareServer();
    const hop = await bareServer((body) => exec.exec(body.sessionId, body.command));
    const floors = {
      http: (sessionId) => api(bare.url, key, '/execute', { sessionId, command: 'true' }),
      grpc: (sessionId) => exec.exec(sessionId, 'true'),
      'http+grpc': (sessionId) => api(hop.url, key, '/execute', { sessionId, command: 'true' }),
    };
    for (const run of Object.values(floors)) await timedRow(ids, 2000, run); // warm-up
    const rounds = { gateway: [], ...Object.fromEntries(Object.keys(floors).map((n) => [n, []])) };
    for (let i = 0; i < ROUNDS; i += 1) {
      rounds.gateway.push(await rowPair((s, n) => row(gateway.url, key, s, n), ids));
      for (const [name, run] of Object.entries(floors)) {
        rounds[name].push(await rowPair((s, n) => timedRow(s, n, run), ids));
      }
    }
    await Promise.all([bare.stop(), hop.stop()]);
    exec.close();
    const { gateway: own, ...floorRounds } = rounds;
    report.rows = rowSummaries(own);
    report.baselines = Object.fromEntries(
      Object.entries(floorRounds).map(([name, list]) => [name, rowSummaries(list)]),
    );
    // The gateway's CPU per run over that of the bare HTTP-in, gRPC-out hop, row by row.
    report.overFloor = Object.fromEntries(
      Object.entries(report.rows).map(([name, r]) => [
        name,
        Number((r.cpuMsPerRun / report.baselines['http+grpc'][name].cpuMsPerRun).toFixed(2)),
      ]),
    );
  } finally {
    await gateway.db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await gateway.stop();
    await stopProfile();
    stub.stop();
  }
  console.log(
    JSON.stringify(report, null, 1).replace(
      /\[\s+([^\]]*?)\s+\]/g,
      (_, inner) => `[${inner.replace(/\s+/g, ' ')}]`,
    ),
  );
}

await main();
