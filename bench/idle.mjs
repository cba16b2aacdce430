// What a sandbox costs while it waits: the CPU of the warm pool's members (frozen while they
// wait) and of an idle active session, read from their cgroups' cpu.stat over a window.
import { createRequire } from 'node:module';
import { docker, sleep } from './lib.mjs';

const require = createRequire(import.meta.url);
const { cgroupCpuReader } = require('../services/agent/dist/testing/cgroup-cpu.js');
const { freezerOfProcess, isFrozen } = require('../services/agent/dist/index.js');

const WINDOW_MS = Number(process.env.BENCH_IDLE_WINDOW_MS ?? 10_000);

/** Reads a container's CPU time in microseconds, through its cgroup (v1 or v2). */
async function cpuReader(containerId) {
  const { State } = await docker.getContainer(containerId).inspect();
  return cgroupCpuReader(State.Pid);
}

/** Per container: the share of one core it used over WINDOW_MS (in %). */
async function idleShares(containerIds) {
  const readers = await Promise.all(containerIds.map(cpuReader));
  const before = await Promise.all(readers.map((read) => read()));
  const started = process.hrtime.bigint();
  await sleep(WINDOW_MS);
  const after = await Promise.all(readers.map((read) => read()));
  const elapsedUs = Number(process.hrtime.bigint() - started) / 1e3;
  return after.map((usec, i) => ((usec - (before[i] ?? 0)) / elapsedUs) * 100);
}

function shareRow(name, shares) {
  const sorted = [...shares].sort((a, b) => a - b);
  const at = (p) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
  const round = (n) => Math.round(n * 1000) / 1000;
  return {
    name,
    unit: '% of a core',
    rounds: shares.length,
    p50: round(at(0.5)),
    p99: round(at(0.99)),
    windowMs: WINDOW_MS,
  };
}

/**
 * The node's pool members waiting to be claimed: frozen, by `docker pause` (gVisor) or by the
 * agent through the member's own cgroup (runc, where Docker still calls it running).
 */
async function waitingMembers(nodeId) {
  const pool = (
    await docker.listContainers({ filters: { label: [`io.sandbox.node=${nodeId}`] } })
  ).filter((c) => c.Names.some((n) => n.startsWith('/sbx-pool-')));
  const frozen = await Promise.all(
    pool.map(async (c) => {
      if (c.State === 'paused') return true;
      const { State } = await docker.getContainer(c.Id).inspect();
      const freezer = await freezerOfProcess(State.Pid);
      return freezer !== undefined && (await isFrozen(freezer));
    }),
  );
  const members = pool.filter((_, i) => frozen[i]);
  if (members.length === 0) throw new Error('no pool member of the node is waiting frozen');
  return members;
}

/**
 * Two rows: every ready pool member of `stack` (waiting to be claimed), and the session
 * `sessionId` left alone after a run (active, not yet idle by the service's delay).
 */
export async function idleRows(stack, sessionId, sessionContainerId) {
  // The rows before may have grown the pool: the members it makes meanwhile are not waiting.
  await stack.poolReady(await stack.poolTarget(), 300_000);
  const members = await waitingMembers(stack.nodeId);
  await stack.api('/execute', { sessionId, command: 'true' });
  const [poolShares, sessionShares] = await Promise.all([
    idleShares(members.map((c) => c.Id)),
    idleShares([sessionContainerId]),
  ]);
  return [
    shareRow('CPU of a waiting pool member', poolShares),
    shareRow('CPU of an idle active session (after one run)', sessionShares),
  ];
}
