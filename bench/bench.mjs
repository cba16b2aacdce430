// pnpm bench: latency of the whole stack (HTTP → gateway → gRPC → agent → runner → process),
// each row next to its baseline measured in the same run: a bare `docker run` for creates, a
// bare `docker exec` and a direct spawn inside the container for runs, a direct GET for
// previews. Sequential (one request at a time), except the previews' throughput rows; pnpm
// bench:load has the other concurrent rows. The agent, the gateway, and for the preview rows
// the edge proxy and the load generator run in processes of their own, as deployed, and are
// warmed before the rows that go through them, as a deployed service that has served a while
// is (warmService; a fresh service's first runs are a row of their own). `command: "true"` is
// timed in turns with its `docker exec` baseline (measureAlternated).
// BENCH_ROUNDS (default 100) bounds every row; BENCH_EGRESS_FIREWALL=off starts the agents
// without their egress firewall; BENCH_ONLY=preview,wake (any of the GROUPS) runs only those
// rows and writes bench/results/bench-<groups>.json; BENCH_CPU_PROF=<dir> writes the CPU
// profiles of the edge proxy, the agent and the gateway (their own processes) there.
// SANDBOX_RUNTIME=gvisor runs sandboxes and baselines on gVisor (ADR 31), into
// bench-<groups>-gvisor.json; BENCH_STORES=external gives the gateway ./scripts/bench's
// PostgreSQL and Redis instead of ./scripts/up's embedded stores, into bench-<groups>-external.json. BENCH_POOL (a SANDBOX_POOL value) and BENCH_POOL_IDLE_PERCENT
// replace the default pool and its idle fill: for ./scripts/test's short run, which checks
// that the rows run, not their figures.
import {
  docker,
  dockerExec,
  elapsedMs,
  inSessionCpu,
  machine,
  measure,
  measureAlternated,
  PREVIEW_DOMAIN,
  printTable,
  row,
  sessionContainer,
  STORES,
  sleep,
  startBenchStack,
  startEdgeProcess,
  startHttpLoad,
  writeJson,
} from './lib.mjs';
import { bareDockerRun, createRows } from './creates.mjs';
import { transitionLateness } from './deadlines.mjs';
import { forkBombRows } from './forkbomb.mjs';
import { forkRows } from './forks.mjs';
import { contextRows } from './contexts.mjs';
import { watchRows } from './watch.mjs';
import { idleRows } from './idle.mjs';
import { wakeStackRows } from './wake.mjs';
import { snapshotRows } from './snapshots.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 100);
const CREATE_ROUNDS = Math.min(ROUNDS, 20);
const CODE_ROUNDS = Math.min(ROUNDS, 40);
const WAKE_ROUNDS = Number(process.env.BENCH_WAKE_ROUNDS ?? 8);
// Creates one after another: back to back, then this far apart (issue 39's rows).
const CREATES_IN_A_ROW = Math.min(ROUNDS, 15);
const CREATE_GAP_MS = 1000;
const PACE_MS = 500;
// Load for the throughput rows: this many keep-alive clients, until either bound is reached.
const LOAD = { clients: 16, maxRequests: 3000, maxMs: 3000 };
const PREVIEW_PORT = 3000;
// Untimed requests first: the edge proxy is a fresh process, and a deployed one is warm (JIT).
const PREVIEW_WARMUP = 300;
// The same for the gateway and the agent, before the rows that go through them: runs (the
// first COLD_ROUNDS of them timed, as a row of their own), code runs, creates.
const SERVICE_WARMUP = {
  runs: ROUNDS * 3,
  codeRuns: Math.min(ROUNDS, 20),
  creates: Math.min(ROUNDS, 10),
};
const COLD_ROUNDS = Math.min(ROUNDS, 100);
// `command: "true"` is a few ms: more rounds steady its p50 (and the ratio to its baseline).
const TRUE_ROUNDS = ROUNDS * 3;
const RATIO_BLOCKS = Math.min(ROUNDS, 10);
const TYPED_CODE =
  'interface Point { x: number; y: number }\nconst p: Point = { x: 1, y: 2 };\nconst sum = (a: Point): number => a.x + a.y;\nconsole.log(sum(p));';

const GROUPS = [
  'create',
  'exec',
  'code',
  'idle',
  'stream',
  'files',
  'watch',
  'preview',
  'wake',
  'snapshot',
  'deadlines',
  'forkbomb',
  'fork',
];
const ONLY = process.env.BENCH_ONLY?.split(',').map((group) => group.trim());
for (const group of ONLY ?? []) {
  if (!GROUPS.includes(group)) throw new Error(`BENCH_ONLY: unknown group ${group} (${GROUPS})`);
}
const runs = (group) => ONLY === undefined || ONLY.includes(group);

/**
 * `argv` spawned `rounds` times by a Node inside the container, in the session's CPU group,
 * timed in there (ms).
 */
async function spawnInside(containerId, name, argv, rounds) {
  const script = `const {spawnSync}=require('child_process');const t=[];for(let i=0;i<${rounds};i++){const s=process.hrtime.bigint();spawnSync(${JSON.stringify(argv[0])},${JSON.stringify(argv.slice(1))});t.push(Number(process.hrtime.bigint()-s)/1e6)}t.sort((a,b)=>a-b);console.log(JSON.stringify({p50:t[Math.floor(t.length/2)],p99:t[Math.min(t.length-1,Math.floor(t.length*0.99))]}))`;
  const out = await dockerExec(containerId, inSessionCpu(['node', '-e', script]));
  const json = out.replace(/[^\x20-\x7e]/g, '').match(/\{.*\}/)[0];
  return { name, rounds, ...JSON.parse(json) };
}

/** From the request to the first stdout byte, and from the process's write to its arrival. */
async function firstByte(stack, sessionId) {
  const total = [];
  const afterWrite = [];
  for (let i = 0; i < ROUNDS + 5; i += 1) {
    const started = process.hrtime.bigint();
    const response = await fetch(`${stack.url}/v1/execute`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ sessionId, command: 'date +%s%N; sleep 0.05', stream: true }),
    });
    const reader = response.body.getReader();
    let text = '';
    while (!/event: stdout\ndata: .*\n/.test(text)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    const arrivedNs = BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6));
    await reader.cancel();
    if (i < 5) continue;
    total.push(elapsedMs(started));
    const data = JSON.parse(/event: stdout\ndata: (.*)\n/.exec(text)[1]);
    const writtenNs = BigInt(String(data.data ?? data).trim());
    afterWrite.push(Number(arrivedNs - writtenNs) / 1e6);
  }
  return [
    row('first streamed byte (request to byte)', ROUNDS, total),
    row('first streamed byte after the process wrote it', ROUNDS, afterWrite),
  ];
}

/** Code runs: paced as a caller thinking between tool calls, back to back, and without a zygote. */
async function codeRows(stack, sessionId, spawnNode) {
  const execCode = (body) => async () => {
    const result = JSON.parse(await stack.api('/execute', { sessionId, ...body }));
    if (result.exitCode !== 0) throw new Error(`code run failed: ${result.stderr}`);
  };
  // A code run's next Node starts after it: a caller's own pace (an agent thinking between
  // tool calls) leaves it that time. Back to back, each run waits for it.
  const pace = () => sleep(PACE_MS);
  return [
    await measure(
      `execute code console.log(1), ${PACE_MS} ms apart`,
      CODE_ROUNDS,
      execCode({ code: 'console.log(1)' }),
      { before: pace, baseline: spawnNode },
    ),
    await measure(
      `execute TypeScript with types, ${PACE_MS} ms apart`,
      CODE_ROUNDS,
      execCode({ code: TYPED_CODE }),
      { before: pace, baseline: spawnNode },
    ),
    await measure(
      'execute code console.log(1), back to back',
      CODE_ROUNDS,
      execCode({ code: 'console.log(1)' }),
      { baseline: spawnNode },
    ),
    await measure(
      `execute code in a Node of its own (as before the zygote), ${PACE_MS} ms apart`,
      Math.min(CODE_ROUNDS, 20),
      execCode({ code: 'console.log(1)', env: { NODE_BENCH: '1' } }),
      { before: pace, baseline: spawnNode },
    ),
  ];
}

/** Wakes: the first request after idle (unpause) and after deep sleep (restore 100 MB). */
/**
 * Previews: a tiny app on port 3000 of the session, through the edge proxy (which asks the
 * gateway for the route, then sends the request to this process's agent) and straight to the
 * container's bridge address. The edge proxy and the load generator run in processes of their
 * own; each row's baseline is measured in the same run, by the same load generator.
 */
async function previewRows(stack, sessionId, containerId) {
  await stack.api('/execute', {
    sessionId,
    command: `nohup node -e "require('http').createServer((q,s)=>s.end('ok')).listen(${PREVIEW_PORT})" >/dev/null 2>&1 & for i in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/${PREVIEW_PORT}) 2>/dev/null && break; sleep 0.1; done`,
  });
  const inspected = await docker.getContainer(containerId).inspect();
  const ip = inspected.NetworkSettings.Networks[stack.agentConfig.sandboxNetwork]?.IPAddress;
  if (!ip) throw new Error(`no address on ${stack.agentConfig.sandboxNetwork}`);
  // The warm pool refills after a claim; its container starts are not the previews' to pay.
  await stack.poolReady(stack.poolSize);
  const edge = await startEdgeProcess(stack);
  const load = startHttpLoad();
  try {
    const throughEdge = {
      origin: edge.url,
      host: `${sessionId.replace('_', '-')}.${PREVIEW_DOMAIN}`,
    };
    const direct = { origin: `http://${ip}:${PREVIEW_PORT}` };
    const directRow = await load.latency(
      'baseline: direct GET to the container',
      direct,
      ROUNDS,
      PREVIEW_WARMUP,
    );
    const edgeRow = await load.latency(
      'preview GET through edge proxy',
      throughEdge,
      ROUNDS,
      PREVIEW_WARMUP,
    );
    const directLoad = await load.throughput('baseline: direct GET to the container', direct, LOAD);
    const edgeLoad = await load.throughput('preview GET through edge proxy', throughEdge, LOAD);
    return {
      results: [directRow, { ...edgeRow, baseline: directRow }],
      loads: [directLoad, { ...edgeLoad, baseline: directLoad }],
    };
  } finally {
    await load.stop();
    await edge.stop();
  }
}

/**
 * Warms the gateway and the agent, fresh processes, as a deployed service that has served a
 * while is warm (JIT): a fresh one answers its first hundred runs about a millisecond slower.
 * Those first runs are timed: the row of what a service just started answers. The session and
 * the creates' sessions are deleted, and the pool has refilled, before the rows that follow.
 */
async function warmService(stack) {
  const sessionId = JSON.parse(await stack.api('/sessions/create', {})).sessionId;
  try {
    const run = () => stack.api('/execute', { sessionId, command: 'true' });
    const cold = await measure(
      'execute command "true", the first runs after the service starts',
      COLD_ROUNDS,
      run,
      { warmup: 0 },
    );
    for (let i = COLD_ROUNDS; i < SERVICE_WARMUP.runs; i += 1) await run();
    for (let i = 0; i < SERVICE_WARMUP.codeRuns; i += 1) {
      await stack.api('/execute', { sessionId, code: 'console.log(1)' });
    }
    for (let i = 0; i < SERVICE_WARMUP.creates; i += 1) {
      await stack.deleteSession(JSON.parse(await stack.api('/sessions/create', {})).sessionId);
    }
    return cold;
  } finally {
    await stack.deleteSession(sessionId);
    await stack.poolReady(await stack.idlePoolTarget(), 300_000);
  }
}

/** The exec and code rows, and the baselines they are measured against (rows too). */
async function runRows(stack, sessionId, containerId, cold) {
  const rows = [];
  const execRows = [
    {
      name: 'baseline: docker exec "true" (Engine API)',
      rounds: ROUNDS,
      fn: () => dockerExec(containerId, ['true']),
    },
  ];
  if (runs('exec')) {
    execRows.push({
      name: 'execute command "true"',
      rounds: TRUE_ROUNDS,
      fn: () => stack.api('/execute', { sessionId, command: 'true' }),
    });
  }
  // The row and its baseline in turns: a ratio of two figures taken minutes apart would
  // carry the machine's swings between them (ADR 39's rows are ratios).
  const [bareExec, execTrue] = await measureAlternated(execRows, RATIO_BLOCKS);
  const spawnTrue = await spawnInside(
    containerId,
    'baseline: direct spawn of "true" in the container',
    ['true'],
    ROUNDS,
  );
  const spawnNode = await spawnInside(
    containerId,
    'baseline: direct spawn of node -e "console.log(1)" in the container',
    ['node', '-e', 'console.log(1)'],
    Math.min(ROUNDS, 20),
  );
  rows.push(bareExec, spawnTrue, spawnNode);
  if (execTrue !== undefined) {
    rows.push({ ...execTrue, baseline: bareExec });
    if (cold !== undefined) rows.push({ ...cold, baseline: bareExec });
  }
  if (runs('code')) {
    rows.push(...(await codeRows(stack, sessionId, spawnNode)));
    rows.push(
      ...(await contextRows(stack, sessionId, containerId, {
        rounds: ROUNDS,
        createRounds: CODE_ROUNDS,
      })),
    );
  }
  return rows;
}

/** Prints the tables and writes bench/results/bench[-groups][-runtime][-external].json. */
async function report(results, loads) {
  console.log(`\nMachine: ${machine()}; the gateway's stores: ${STORES}`);
  printTable('One request at a time', results);
  if (loads.length > 0) {
    printTable(
      `Throughput: ${LOAD.clients} keep-alive clients, at most ${LOAD.maxRequests} requests or ${LOAD.maxMs / 1000} s`,
      loads,
    );
  }
  const groups = ONLY === undefined ? 'bench' : `bench-${ONLY.join('-')}`;
  await writeJson(groups, [...results, ...loads.map((l) => ({ ...l, name: `${l.name} (load)` }))]);
}

async function main() {
  const results = [];
  const loads = [];
  // The agent's own warm pool, as ./scripts/up starts it (unless BENCH_POOL says otherwise),
  // on a node that has been up a while: the pool filled in idle time (ADR 46).
  const options = {
    pool: process.env.BENCH_POOL,
    agentProcess: true,
    gatewayProcess: true,
    idleFill: true,
  };
  const stack = await startBenchStack(options);
  const created = [];
  try {
    await stack.poolReady(await stack.idlePoolTarget(), 300_000);
    const cold =
      runs('create') || runs('exec') || runs('code') ? await warmService(stack) : undefined;
    if (runs('create')) {
      results.push(
        ...(await createRows(stack, created, {
          rounds: CREATE_ROUNDS,
          inARow: CREATES_IN_A_ROW,
          gapMs: CREATE_GAP_MS,
        })),
      );
    }

    const sessionId = JSON.parse(await stack.api('/sessions/create', {})).sessionId;
    created.push(sessionId);
    const container = await sessionContainer(sessionId);
    if (runs('exec') || runs('code')) {
      results.push(...(await runRows(stack, sessionId, container.Id, cold)));
    }
    if (runs('idle')) results.push(...(await idleRows(stack, sessionId, container.Id)));
    if (runs('stream')) results.push(...(await firstByte(stack, sessionId)));
    if (runs('files')) {
      const oneMb = 'x'.repeat(1024 * 1024);
      results.push(
        await measure('file write 1 MB', ROUNDS, () =>
          stack.api('/files/write', { sessionId, path: 'bench.txt', content: oneMb }),
        ),
      );
      results.push(
        await measure('file read 1 MB', ROUNDS, () =>
          stack.api(`/files/read?sessionId=${sessionId}&path=bench.txt`),
        ),
      );
    }
    if (runs('watch')) results.push(...(await watchRows(stack, sessionId, ROUNDS)));
    if (runs('preview')) {
      const preview = await previewRows(stack, sessionId, container.Id);
      results.push(...preview.results);
      loads.push(...preview.loads);
    }
    if (runs('wake')) await wakeStackRows(results, WAKE_ROUNDS);
    if (runs('snapshot')) {
      const poolSize = stack.poolSize;
      await snapshotRows(stack, results, { rounds: WAKE_ROUNDS, poolSize });
    }
    if (runs('deadlines')) results.push(...(await transitionLateness()));
    if (runs('forkbomb')) results.push(...(await forkBombRows(stack)));
    if (runs('fork'))
      await forkRows(
        results,
        stack,
        (image) => bareDockerRun(image, CREATE_ROUNDS),
        Math.min(CREATE_ROUNDS, 10),
      );

    await report(results, loads);
  } finally {
    for (const id of created) await stack.deleteSession(id);
    await stack.stop();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
