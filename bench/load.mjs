// pnpm bench:load: the concurrent rows and the node's density, each bounded in count and time,
// loopback only. Rows: creates 8 at a time (from a full warm pool, and without a pool), many
// sessions running `echo` at once (a closed loop, the burst of its first runs, and an open loop
// at a set rate), and the memory an idle session holds. The gateway's stores are ./scripts/up's
// embedded ones unless BENCH_STORES=external (bench/stack-env.mjs).
import { readFile } from 'node:fs/promises';
import {
  AS_DEPLOYED,
  docker,
  dockerExec,
  elapsedMs,
  inSessionCpu,
  machine,
  machineBusyMs,
  openLoop,
  printTable,
  row,
  sleep,
  startBenchStack,
  STORES,
  writeJson,
} from './lib.mjs';
import { shellEchoes } from './shell-echoes.mjs';
import { closedLoop, concurrently } from './timing.mjs';

const SESSIONS = Number(process.env.BENCH_LOAD_SESSIONS ?? 60);
const CREATE_CONCURRENCY = 8;
const EXECS_PER_SESSION = Number(process.env.BENCH_LOAD_EXECS ?? 10);
const DENSITY_SESSIONS = Number(process.env.BENCH_DENSITY_SESSIONS ?? 500);
const WAKE_SAMPLES = 20;
// The open-loop rows: runs offered at each of these rates (a row each), whatever the node answers.
const OPEN_RATES = (process.env.BENCH_LOAD_RATES ?? '200,300').split(',').map(Number);
const OPEN_RUNS = Number(process.env.BENCH_LOAD_OPEN_RUNS ?? 1200);

/** A create that may be refused (503 with Retry-After): refusals are counted, not errors. */
const admitted = (stack, ids, refused) => async () => {
  const response = await fetch(`${stack.url}/v1/sessions/create`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.key}`, 'content-type': 'application/json' },
    body: '{}',
  });
  const body = await response.json();
  if (response.status === 200) ids.push(body.sessionId);
  else if (response.status === 503) refused.push(Number(response.headers.get('retry-after')));
  else throw new Error(`create: ${response.status} ${JSON.stringify(body)}`);
};

const refusalNote = (refused) =>
  refused.length === 0 ? 'none' : `Retry-After ${Math.min(...refused)}–${Math.max(...refused)} s`;

/** How many `/bin/true` each sandbox spawns in the floor row. */
const FLOOR_SPAWNS = Number(process.env.BENCH_LOAD_FLOOR_SPAWNS ?? 40);

/**
 * The floor of the `echo` rows: every session's sandbox spawning `/bin/true` in a loop inside
 * itself (in its CPU group), all at once. The rate is every spawn over the time from the
 * first loop's start to the last one's end, as the sandboxes' own clocks (the host's) read it.
 */
async function spawnFloor(ids) {
  const script = `s=$EPOCHREALTIME; for ((i = 0; i < ${FLOOR_SPAWNS}; i++)); do /bin/true; done; echo "$s $EPOCHREALTIME"`;
  const busy = machineBusyMs();
  const spans = await Promise.all(
    ids.map(async (id) => {
      const [container] = await docker.listContainers({ filters: { name: [`^/sbx-${id}$`] } });
      const out = await dockerExec(container.Id, inSessionCpu(['bash', '-c', script]));
      // The output comes in Docker's frames: the two times are found by their shape.
      const [, start, end] = /(\d+\.\d+) (\d+\.\d+)/.exec(out) ?? [];
      return { start: Number(start), end: Number(end) };
    }),
  );
  const first = Math.min(...spans.map((span) => span.start));
  const last = Math.max(...spans.map((span) => span.end));
  // Machine-wide, the docker execs that start the loops included.
  const cpuMsPerSpawn = (machineBusyMs() - busy) / (ids.length * FLOOR_SPAWNS);
  const perSecond = (ids.length * FLOOR_SPAWNS) / (last - first);
  const each = spans
    .map((span) => ((span.end - span.start) * 1000) / FLOOR_SPAWNS)
    .sort((a, b) => a - b);
  return {
    ...row(
      `baseline: ${ids.length} sandboxes spawning /bin/true in a loop inside, at once`,
      ids.length,
      each,
    ),
    perSecond,
    cpuMsPerSpawn,
    note: `per-spawn ms in each sandbox; the rate is the floor of the echo rows; ${cpuMsPerSpawn.toFixed(2)} ms of the machine's CPU per spawn`,
  };
}

/** How many creates come at once the moment the node has started (issue 39). */
const STARTUP_CREATES = 10;

/** STARTUP_CREATES creates at once, as soon as the node answers: made, refused or failed. */
async function startupCreates(stack) {
  const made = [];
  const refused = [];
  const failed = [];
  const create = admitted(stack, made, refused);
  const result = await concurrently(
    `${STARTUP_CREATES} creates at once, right after the node started (pool of ${stack.poolSize})`,
    STARTUP_CREATES,
    STARTUP_CREATES,
    () => create().catch((err) => failed.push(err.message)),
  );
  const firstError = failed.length === 0 ? '' : `: ${failed[0]}`;
  result.note = `${made.length} made, ${refused.length} answered 503 (${refusalNote(refused)}), ${failed.length} errors${firstError}`;
  for (const id of made) await stack.deleteSession(id);
  return result;
}

/** Session sandboxes (not pool members) of the node that still run. */
async function sessionSandboxes(nodeId) {
  const all = await docker.listContainers({ filters: { label: [`io.sandbox.node=${nodeId}`] } });
  return all.filter((c) => c.Names.some((n) => n.startsWith('/sbx-ses_'))).length;
}

async function memAvailableBytes() {
  const text = await readFile('/proc/meminfo', 'utf8');
  return Number(/MemAvailable:\s+(\d+) kB/.exec(text)[1]) * 1024;
}

async function main() {
  const rows = [...(await coldCreateRows())];
  // The agent's own pool, as ./scripts/up runs it: it grows with the creates it sees.
  let warmUpFailures = 0;
  const stack = await startBenchStack({
    name: 'load',
    agentProcess: true,
    gatewayProcess: true,
    idleFill: true,
    onAgentLog: (logged) => {
      if (logged.msg === 'runner warm-up failed') warmUpFailures += 1;
    },
  });
  const ids = [];
  try {
    rows.push(await startupCreates(stack));
    rows.push(...(await burstRows(stack, ids)));
    if (ids.length < SESSIONS) throw new Error(`only ${ids.length} sessions for the echo rows`);
    rows.push(...(await echoRows(stack, ids)));
    for (const id of ids.splice(0)) await stack.deleteSession(id);
  } finally {
    for (const id of ids) await stack.deleteSession(id);
    await stack.stop();
  }
  rows.push({
    name: '"runner warm-up failed" in the agent\'s log, all of the rows above',
    rounds: 1,
    p50: warmUpFailures,
    p99: warmUpFailures,
    note: 'count',
  });
  rows.push(...(await densityRows()));

  console.log(`\nMachine: ${machine()}; the gateway's stores: ${STORES}`);
  printTable('Concurrent load (p50/p99 in ms; the last row in MB)', rows);
  await writeJson('load', rows);
}

/** Concurrent creates without a pool, as before it (a stack of its own). */
async function coldCreateRows() {
  const rows = [];
  const cold = await startBenchStack({ pool: '0', name: 'load-cold', ...AS_DEPLOYED });
  const coldIds = [];
  try {
    const count = Math.min(SESSIONS, 24);
    const refused = [];
    rows.push(
      await concurrently(
        `session create, ${CREATE_CONCURRENCY} at a time (no pool)`,
        count,
        CREATE_CONCURRENCY,
        admitted(cold, coldIds, refused),
      ),
    );
    rows.at(-1).note = `${coldIds.length} made, ${refused.length} answered 503`;
  } finally {
    for (const id of coldIds) await cold.deleteSession(id);
    await cold.stop();
  }
  return rows;
}

/**
 * Two bursts of creates: the first finds the pool filled in idle time, the second the pool
 * grown towards the first. The second's sessions are pushed onto `ids` (the first's are deleted).
 */
async function burstRows(stack, ids) {
  const rows = [];
  await stack.poolReady(stack.poolSize, 120_000);
  // The node idle, as after ./scripts/up: the pool grows past its size towards its share
  // of the node's memory (ADR 46). The first burst comes once it has.
  const filling = process.hrtime.bigint();
  const idleTarget = await stack.idlePoolTarget();
  await stack.poolReady(idleTarget, 300_000);
  const filledS = elapsedMs(filling) / 1000;
  // A first burst finds the pool so: what it lacks starts cold, a few at a time, and
  // those that could not start in time are refused at once (503 with Retry-After).
  const first = [];
  const refused = [];
  rows.push(
    await concurrently(
      `session create, ${CREATE_CONCURRENCY} at a time, ${SESSIONS} sessions, a first burst (pool of ${idleTarget}, filled in ${filledS.toFixed(0)} s of idle time)`,
      SESSIONS,
      CREATE_CONCURRENCY,
      admitted(stack, first, refused),
    ),
  );
  rows.at(-1).note =
    `${first.length} made, ${refused.length} answered 503 (${refusalNote(refused)})`;
  // The create that comes right after the burst: answered at once, made or refused.
  const after = [];
  const afterRefused = [];
  rows.push(
    await concurrently(
      'a create right after the burst',
      1,
      1,
      admitted(stack, after, afterRefused),
    ),
  );
  rows.at(-1).note = after.length === 1 ? 'made' : `503 (${refusalNote(afterRefused)})`;
  first.push(...after);
  // Every sandbox of the burst goes: none may be left running.
  await concurrently('burst deletes', first.length, CREATE_CONCURRENCY, (i) =>
    stack.deleteSession(first[i]),
  );
  const left = await sessionSandboxes(stack.nodeId);
  rows.push({
    name: 'sandboxes left running after the burst was deleted',
    rounds: first.length,
    p50: left,
    p99: left,
    note: 'count',
  });
  // The pool has grown towards the burst (within SANDBOX_POOL_MAX): a second burst.
  const target = await stack.poolTarget();
  const growing = process.hrtime.bigint();
  await stack.poolReady(Math.min(target, SESSIONS), 300_000);
  const grownS = elapsedMs(growing) / 1000;
  const secondRefused = [];
  rows.push(
    await concurrently(
      `session create, ${CREATE_CONCURRENCY} at a time, ${SESSIONS} sessions, the next burst (the pool grown to ${target})`,
      SESSIONS,
      CREATE_CONCURRENCY,
      admitted(stack, ids, secondRefused),
    ),
  );
  rows.at(-1).note =
    `${ids.length} made, ${secondRefused.length} answered 503; the pool grew in ${grownS.toFixed(1)} s`;
  return rows;
}

/** Echo runs in the `ids` sessions: a closed loop (pool refilling, then not), open loops. */
async function echoRows(stack, ids) {
  const rows = [];
  const echo = (i) => stack.api('/execute', { sessionId: ids[i % SESSIONS], command: 'echo hi' });
  const echoes = (what, note) =>
    closedLoop(
      `${SESSIONS} sessions running echo at once (${EXECS_PER_SESSION} each after the first)${what}`,
      `${SESSIONS} runs arriving at once, one per session${what}`,
      SESSIONS * EXECS_PER_SESSION,
      SESSIONS,
      echo,
      note,
    );
  // Right after the creates the pool makes the members they took, on the same two cores.
  rows.push(
    ...(await echoes(
      ', pool refilling',
      'the pool making the members the creates took, meanwhile',
    )),
  );
  // The row itself: the node doing only the runs.
  const refilling = process.hrtime.bigint();
  await stack.poolReady(Math.min(await stack.poolTarget(), SESSIONS), 300_000);
  const busy = machineBusyMs();
  const measured = await echoes(
    '',
    `after the pool refilled (${(elapsedMs(refilling) / 1000).toFixed(1)} s)`,
  );
  // The machine's CPU per run, load generator included: what the floor's CPU per spawn is
  // compared with (the same machine-wide count, below). The burst row's runs count too.
  const runs = measured[0].rounds + measured[1].rounds;
  measured[1].cpuMsPerRun = (machineBusyMs() - busy) / runs;
  measured[1].note += `; ${measured[1].cpuMsPerRun.toFixed(2)} ms of the machine's CPU per run`;
  rows.push(...measured);
  // The same sessions, the runs arriving at a set rate instead of 60 clients each waiting
  // for its last answer: whether the node keeps up with that rate, and at what latency.
  for (const rate of OPEN_RATES) {
    rows.push(
      await openLoop(
        `${SESSIONS} sessions running echo, ${rate} runs/s offered (open loop)`,
        OPEN_RUNS,
        rate,
        echo,
      ),
    );
  }
  rows.push(await spawnFloor(ids));
  rows.push(await shellEchoes(stack, ids, EXECS_PER_SESSION));
  return rows;
}

/**
 * Density: DENSITY_SESSIONS sessions on the node at once, each having run code once (its
 * runner and next Node started), then idle (paused). What each holds, from the host's
 * available memory, and how fast one of them wakes among all the others.
 */
async function densityRows() {
  const rows = [];
  const dense = await startBenchStack({
    pool: '0',
    name: 'load-density',
    agentProcess: true,
    drivenLifecycle: true,
    // Idle (paused) they stay: a deep sleep would remove their containers from the measure.
    gatewayEnv: { SESSION_DEEP_SLEEP_AFTER_S: '86400' },
  });
  const denseIds = [];
  try {
    await sleep(1000);
    const before = await memAvailableBytes();
    await denseCreates(dense, denseIds);
    const codeRun = (i) => dense.api('/execute', { sessionId: denseIds[i], code: '1' });
    await concurrently('density code runs', denseIds.length, CREATE_CONCURRENCY, codeRun);
    await sleep(1500);
    const idled = new Set();
    const until = Date.now() + 120_000;
    while (idled.size < denseIds.length && Date.now() < until) {
      const pass = await dense.gateway.sweeper.sweep();
      for (const id of pass.idled) idled.add(id);
      if (pass.idled.length === 0) await sleep(200);
    }
    await sleep(1000);
    const after = await memAvailableBytes();
    const perSession = (before - after) / denseIds.length;
    const fits = Math.floor(after / perSession) + denseIds.length;
    rows.push({
      name: `idle session memory (${denseIds.length} of ${DENSITY_SESSIONS} sessions made, ${idled.size} idle)`,
      rounds: denseIds.length,
      p50: perSession / 2 ** 20,
      p99: perSession / 2 ** 20,
      note: `MB each: about ${fits} idle sessions fit in this node's available memory`,
    });
    const sample = denseIds.filter((_, i) => i % Math.ceil(denseIds.length / WAKE_SAMPLES) === 0);
    rows.push(
      await concurrently(
        `wake from idle, one at a time, among ${denseIds.length} sessions`,
        sample.length,
        1,
        (i) => dense.api('/execute', { sessionId: sample[i], command: 'true' }),
      ),
    );
  } finally {
    const ids = denseIds.splice(0);
    await concurrently('density deletes', ids.length, CREATE_CONCURRENCY, (i) =>
      dense.deleteSession(ids[i]),
    );
    await dense.stop();
  }
  return rows;
}

/**
 * DENSITY_SESSIONS creates, CREATE_CONCURRENCY at a time, onto `denseIds`. The node's limit is
 * part of the answer: failures are counted, and creates stop after a run of them. A create the
 * node cannot start in time (503) is tried again after its Retry-After, as a client should:
 * that is admission, not the node's limit.
 */
async function denseCreates(dense, denseIds) {
  let failures = 0;
  await concurrently('density creates', DENSITY_SESSIONS, CREATE_CONCURRENCY, async () => {
    if (failures >= 10) return;
    try {
      for (let attempt = 0; ; attempt += 1) {
        const refused = [];
        await admitted(dense, denseIds, refused)();
        if (refused.length === 0) break;
        if (attempt >= 5) throw new Error(`refused ${attempt + 1} times (503)`);
        await sleep((refused[0] || 1) * 1000);
      }
      failures = 0;
    } catch (err) {
      failures += 1;
      console.error(`density: create ${denseIds.length + 1} failed: ${err.message}`);
    }
  });
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
