// node bench/network-leaves.mjs (through `heavy`): bursts of container removals on one
// user-defined network of their own, made as the agent makes them, in two ways alternated:
//   concurrent     every container force-removed at once (the agent before SerialNetworkLeaves);
//   serial-leaves  each running container first leaves the network, one at a time per network,
//                  then all are removed at once (SerialNetworkLeaves, the agent now).
// Each burst is timed, and the engine probed all along it with a network inspect (it needs
// libnetwork's controller lock): a probe unanswered for LEAVES_WEDGED_MS means the engine
// wedged (moby/moby#46661). Then the run stops at once, leaves its containers and says so.
//
// Only containers and a network this run makes, labelled sandbox-bench.leaves=<run id>, and
// removed by their ids. Bounded: LEAVES_ROUNDS bursts per way of LEAVES_CONTAINERS containers,
// and no burst starts after LEAVES_MAX_S seconds. LEAVES_SOCKET: another engine's socket.
import {
  LABEL,
  leavesEngine,
  SerialNetworkLeaves,
  startSleeper,
  WEDGED_MS,
} from './leaves-engine.mjs';
import { elapsedMs, percentile, sleep } from './timing.mjs';

const CONTAINERS = Number(process.env.LEAVES_CONTAINERS ?? 30);
const ROUNDS = Number(process.env.LEAVES_ROUNDS ?? 6);
const MAX_S = Number(process.env.LEAVES_MAX_S ?? 900);
/** The ways of a burst, taken in turn (LEAVES_WAYS=serial-leaves: that one alone). */
const WAYS = (process.env.LEAVES_WAYS ?? 'concurrent,serial-leaves').split(',');

const engine = leavesEngine('bench-leaves');
const { docker, logger, client, runId, network } = engine;
/** Every container this run made and has not removed yet, by id. */
const made = new Set();

/** Runs `work` on each item, `width` at a time. */
async function eachLimited(items, width, work) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: width }, worker));
}

async function startContainers(round) {
  const names = Array.from({ length: CONTAINERS }, (_, i) => `bench-leaves-${runId}-${round}-${i}`);
  await eachLimited(names, 4, async (name) => made.add(await startSleeper(engine, name)));
  return [...made];
}

/** Inspects the network over and over until `done`; the longest wait, or 'wedged'. */
function probe(done) {
  let longest = 0;
  let wedged = false;
  const loop = async () => {
    while (!done.settled && !wedged) {
      const since = process.hrtime.bigint();
      const answer = docker.getNetwork(network).inspect();
      const timer = setTimeout(() => (wedged = true), WEDGED_MS);
      await answer.catch(() => undefined);
      clearTimeout(timer);
      longest = Math.max(longest, elapsedMs(since));
      await sleep(100);
    }
  };
  const running = loop();
  return { running, result: () => ({ longest, wedged }) };
}

async function burst(way, ids) {
  const remover = way === 'serial-leaves' ? new SerialNetworkLeaves(client, logger) : client;
  const done = { settled: false };
  const watch = probe(done);
  const since = process.hrtime.bigint();
  const each = [];
  const all = Promise.all(
    ids.map(async (id) => {
      const start = process.hrtime.bigint();
      await remover.remove(id);
      each.push(elapsedMs(start));
      made.delete(id);
    }),
  ).finally(() => (done.settled = true));
  // A wedged engine never answers: the probe says so, the removals stay pending.
  while (!done.settled && !watch.result().wedged) await sleep(200);
  const { longest, wedged } = watch.result();
  if (wedged) return { way, wedged: true, removed: each.length, of: ids.length };
  await all;
  await watch.running;
  each.sort((a, b) => a - b);
  return {
    way,
    wedged: false,
    burstMs: Math.round(elapsedMs(since)),
    p50Ms: Math.round(percentile(each, 50)),
    maxMs: Math.round(each[each.length - 1]),
    longestProbeMs: Math.round(longest),
  };
}

async function main() {
  const deadline = Date.now() + MAX_S * 1000;
  await docker.createNetwork({ Name: network, Driver: 'bridge', Labels: { [LABEL]: runId } });
  const rows = [];
  try {
    for (let round = 0; round < ROUNDS * WAYS.length && Date.now() < deadline; round += 1) {
      const way = WAYS[round % WAYS.length];
      const ids = await startContainers(round);
      await sleep(1000);
      const row = await burst(way, ids);
      rows.push(row);
      console.log(JSON.stringify({ round, containers: ids.length, ...row }));
      if (row.wedged) {
        console.log(
          `ENGINE WEDGED in a ${way} burst. Left in place: network ${network} and containers ` +
            `labelled ${LABEL}=${runId}. Take a goroutine dump (kill -USR1 <dockerd pid>), ` +
            'restart dockerd (scripts/lib/ensure-docker.sh: restart_docker), then remove them.',
        );
        process.exit(2);
      }
    }
  } finally {
    if (!rows.some((r) => r.wedged)) {
      await eachLimited([...made], 4, (id) => client.remove(id));
      await docker.getNetwork(network).remove();
    }
  }
  summarise(rows);
}

function summarise(rows) {
  for (const way of WAYS) {
    const mine = rows.filter((r) => r.way === way);
    const bursts = mine.map((r) => r.burstMs).sort((a, b) => a - b);
    const probes = mine.map((r) => r.longestProbeMs).sort((a, b) => a - b);
    console.log(
      JSON.stringify({
        way,
        bursts: mine.length,
        containersPerBurst: CONTAINERS,
        burstMsMedian: percentile(bursts, 50),
        burstMsAll: bursts,
        longestProbeMsMedian: percentile(probes, 50),
      }),
    );
  }
}

await main();
