// node bench/network-leaves-churn.mjs (through `heavy`; best against an engine of its own,
// LEAVES_SOCKET): tries to reproduce Docker 20.10's libnetwork leave deadlock
// (moby/moby#46661) faster than bursts of removals do. CHURN_CONTAINERS running containers on
// a network of their own; CHURN_WORKERS workers each take one off the network and put it back,
// over and over, for CHURN_SECONDS per way:
//   concurrent  the leaves overlap (as removals of a burst did);
//   serial      each leave goes through SerialNetworkLeaves' queue of the network (one at a time).
// The engine is probed all along (a network inspect needs libnetwork's controller lock): a probe
// unanswered for LEAVES_WEDGED_MS means it wedged; the run then stops at once, leaves everything
// in place and says so. Only containers and a network this run makes (label sandbox-bench.leaves).
//
// An engine of its own (what docs/performance.md's runs used; stop it by its pid, then remove
// its two directories and the br-* bridges of its networks):
//   dockerd --data-root /var/lib/docker-research --exec-root /var/run/docker-research \
//     --pidfile /var/run/docker-research/dockerd.pid -H unix:///var/run/docker-research/docker.sock \
//     --bridge=none --iptables=false --ip-masq=false --containerd-namespace moby-research \
//     --containerd-plugins-namespace plugins-moby-research
// and a 2 MB image: /usr/bin/sleep with libc and ld.so in a tarball, `docker import -c
// 'ENTRYPOINT ["/usr/bin/sleep"]'`, named by LEAVES_IMAGE.
import {
  leavesEngine,
  SerialNetworkLeaves,
  SOCKET,
  startSleeper,
  WEDGED_MS,
  LABEL,
} from './leaves-engine.mjs';
import { elapsedMs, sleep } from './timing.mjs';

const engine = leavesEngine('bench-churn');
const { docker, logger, client, runId, network } = engine;

const CONTAINERS = Number(process.env.CHURN_CONTAINERS ?? 24);
const WORKERS = Number(process.env.CHURN_WORKERS ?? 12);
const SECONDS = Number(process.env.CHURN_SECONDS ?? 120);
/** Loops that inspect the network meanwhile: they contend for the controller's lock. */
const INSPECTORS = Number(process.env.CHURN_INSPECTORS ?? 0);
const WAYS = (process.env.CHURN_WAYS ?? 'concurrent,serial').split(',');

async function startContainers() {
  const ids = [];
  for (let i = 0; i < CONTAINERS; i += 1) {
    ids.push(await startSleeper(engine, `bench-churn-${runId}-${i}`));
  }
  return ids;
}

/** Each worker owns its own containers (ids i, i+WORKERS, ...): off the network and back. */
async function churn(way, ids, until, state) {
  const leaves = way === 'serial' ? new SerialNetworkLeaves(client, logger) : client;
  const worker = async (w) => {
    const mine = ids.filter((_, i) => i % WORKERS === w);
    for (let n = 0; Date.now() < until && !state.wedged; n += 1) {
      const id = mine[n % mine.length];
      await leaves.disconnect(id, network);
      state.leaves += 1;
      if (state.wedged) return;
      await docker.getNetwork(network).connect({ Container: id });
    }
  };
  const inspector = async () => {
    while (Date.now() < until && !state.wedged) {
      await docker
        .getNetwork(network)
        .inspect()
        .catch(() => undefined);
    }
  };
  return Promise.all([
    ...Array.from({ length: WORKERS }, (_, w) => worker(w)),
    ...Array.from({ length: INSPECTORS }, inspector),
  ]);
}

async function probe(until, state) {
  while (Date.now() < until && !state.wedged) {
    const since = process.hrtime.bigint();
    const timer = setTimeout(() => (state.wedged = true), WEDGED_MS);
    await docker
      .getNetwork(network)
      .inspect()
      .catch(() => undefined);
    clearTimeout(timer);
    state.longestProbeMs = Math.max(state.longestProbeMs, Math.round(elapsedMs(since)));
    await sleep(200);
  }
}

async function main() {
  console.log(JSON.stringify({ runId, engine: (await docker.version()).Version, SOCKET }));
  await docker.createNetwork({ Name: network, Driver: 'bridge', Labels: { [LABEL]: runId } });
  const ids = await startContainers();
  for (const way of WAYS) {
    const state = { leaves: 0, wedged: false, longestProbeMs: 0 };
    const until = Date.now() + SECONDS * 1000;
    const work = churn(way, ids, until, state).catch((err) => (state.error = String(err)));
    await Promise.race([probe(until, state).then(() => work), waitWedged(state)]);
    state.done = true;
    console.log(JSON.stringify({ way, seconds: SECONDS, workers: WORKERS, ...state }));
    if (state.wedged) {
      console.log(
        `ENGINE WEDGED (${way}) at ${SOCKET}. Left in place: network ${network}, containers ` +
          `labelled ${LABEL}=${runId}. Dump: kill -USR1 <its dockerd pid>; then restart it.`,
      );
      process.exit(2);
    }
  }
  for (const id of ids) await client.remove(id);
  await docker.getNetwork(network).remove();
}

async function waitWedged(state) {
  while (!state.wedged && !state.done) await sleep(500);
}

await main();
