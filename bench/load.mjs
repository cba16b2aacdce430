// pnpm bench:load: the concurrent rows and the node's density, each bounded in count and time,
// loopback only. Rows: creates 8 at a time (from a full warm pool, and without a pool), many
// sessions running `echo` at once, and the memory an idle session holds.
import { readFile } from 'node:fs/promises';
import { elapsedMs, machine, printTable, row, sleep, startBenchStack, writeJson } from './lib.mjs';

const SESSIONS = Number(process.env.BENCH_LOAD_SESSIONS ?? 60);
const CREATE_CONCURRENCY = 8;
const EXECS_PER_SESSION = Number(process.env.BENCH_LOAD_EXECS ?? 10);
const DENSITY_SESSIONS = Number(process.env.BENCH_DENSITY_SESSIONS ?? 40);

/** `count` calls of `fn`, `concurrency` at a time; latencies and the rate. */
async function concurrently(name, count, concurrency, fn, extra = {}) {
  const times = [];
  let next = 0;
  const started = process.hrtime.bigint();
  const worker = async () => {
    while (next < count) {
      const i = next;
      next += 1;
      const begun = process.hrtime.bigint();
      await fn(i);
      times.push(elapsedMs(begun));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return row(name, count, times, { perSecond: count / (elapsedMs(started) / 1000), ...extra });
}

const create = (stack, ids) => async () => {
  ids.push(JSON.parse(await stack.api('/sessions/create', {})).sessionId);
};

async function memAvailableBytes() {
  const text = await readFile('/proc/meminfo', 'utf8');
  return Number(/MemAvailable:\s+(\d+) kB/.exec(text)[1]) * 1024;
}

async function main() {
  const rows = [];
  // Without a pool, as before it.
  const cold = await startBenchStack({ pool: '0', name: 'load-cold' });
  const coldIds = [];
  try {
    const count = Math.min(SESSIONS, 24);
    rows.push(
      await concurrently(
        `session create, ${CREATE_CONCURRENCY} at a time (no pool)`,
        count,
        CREATE_CONCURRENCY,
        create(cold, coldIds),
      ),
    );
  } finally {
    for (const id of coldIds) await cold.deleteSession(id);
    await cold.stop();
  }

  const stack = await startBenchStack({ pool: `${SESSIONS}:1024:0.25:1024`, name: 'load' });
  const ids = [];
  try {
    const filling = process.hrtime.bigint();
    await stack.poolReady(SESSIONS, 300_000);
    const fillS = elapsedMs(filling) / 1000;
    rows.push(
      await concurrently(
        `session create, ${CREATE_CONCURRENCY} at a time (${SESSIONS} sessions, warm pool)`,
        SESSIONS,
        CREATE_CONCURRENCY,
        create(stack, ids),
        { note: `the pool of ${SESSIONS} filled in ${fillS.toFixed(1)} s` },
      ),
    );
    rows.push(
      await concurrently(
        `${SESSIONS} sessions running echo at once (${EXECS_PER_SESSION} each)`,
        SESSIONS * EXECS_PER_SESSION,
        SESSIONS,
        (i) => stack.api('/execute', { sessionId: ids[i % SESSIONS], command: 'echo hi' }),
      ),
    );
    for (const id of ids.splice(0)) await stack.deleteSession(id);
  } finally {
    for (const id of ids) await stack.deleteSession(id);
    await stack.stop();
  }

  // Density: what an idle session holds, from the host's available memory.
  const dense = await startBenchStack({ pool: '0', name: 'load-density' });
  const denseIds = [];
  try {
    await sleep(1000);
    const before = await memAvailableBytes();
    await concurrently(
      'density creates',
      DENSITY_SESSIONS,
      CREATE_CONCURRENCY,
      create(dense, denseIds),
    );
    // Each session runs code once (its runner and next Node started), then idles (paused).
    for (const id of denseIds) await dense.api('/execute', { sessionId: id, code: '1' });
    await sleep(1500);
    const pass = await dense.gateway.sweeper.sweep();
    await sleep(1000);
    const after = await memAvailableBytes();
    const perSession = (before - after) / DENSITY_SESSIONS;
    const fits = Math.floor(after / perSession) + DENSITY_SESSIONS;
    rows.push({
      name: `idle session memory (${DENSITY_SESSIONS} sessions, ${pass.idled.length} idled)`,
      rounds: DENSITY_SESSIONS,
      p50: perSession / 2 ** 20,
      p99: perSession / 2 ** 20,
      note: `MB each: about ${fits} idle sessions fit in this node's available memory`,
    });
  } finally {
    for (const id of denseIds) await dense.deleteSession(id);
    await dense.stop();
  }

  console.log(`\nMachine: ${machine()}`);
  printTable('Concurrent load (p50/p99 in ms; the last row in MB)', rows);
  await writeJson('load', rows);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
