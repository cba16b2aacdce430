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
import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { exited, machine } from './lib.mjs';
import { call, journey } from './soak-journey.mjs';
import { firewallRules, leftovers } from './soak-leftovers.mjs';
import { logDir, loggedErrors, startService } from './soak-service.mjs';
import { SoakStats } from './soak-stats.mjs';
import { sleep } from './timing.mjs';

const MINUTES = Number(process.env.SOAK_MINUTES ?? 30);
const WORKERS = Number(process.env.SOAK_WORKERS ?? 4);
const WINDOW_S = Number(process.env.SOAK_WINDOW_S ?? 300);
const OP_TIMEOUT_MS = 60_000;

const databaseUrl = process.env.SOAK_DATABASE_URL;
const redisUrl = process.env.SOAK_REDIS_URL;
if (!databaseUrl || !redisUrl) throw new Error('run through ./scripts/soak');

const nodeId = `soak-${randomBytes(4).toString('hex')}`;
const base = `/var/lib/sandbox-agent/soak/${nodeId}`;
/** The soak's node and service settings (bench/soak-service.mjs). */
const soak = {
  nodeId,
  token: randomBytes(16).toString('hex'),
  dirs: { workspaces: base, packages: `${base}-packages`, blobs: `${base}-blobs` },
  databaseUrl,
  redisUrl,
  previewDomain: 'preview.soak',
  idleAfterS: 4,
  deepSleepAfterS: 10,
};

const stats = new SoakStats(WINDOW_S, OP_TIMEOUT_MS);
/** Sessions created and not deleted yet. */
const live = new Set();
let journeys = 0;

async function worker(service, deadline) {
  while (Date.now() < deadline) {
    journeys += 1;
    await journey({ service, stats, live, soak }, journeys).catch(() => undefined);
  }
}

/** The workers until the time is up, with RSS samples and a line of progress a minute. */
async function soakFor(service) {
  const sampler = setInterval(() => stats.sampleRss(service.processes), 10_000);
  const progress = setInterval(() => {
    const failed = [...stats.errors.values()].reduce((a, b) => a + b, 0);
    console.log(
      `${((Date.now() - stats.startedAt) / 60_000).toFixed(1)} min: ${journeys} journeys, ${failed} errors, ${live.size} sessions live`,
    );
  }, 60_000);
  const deadline = stats.startedAt + MINUTES * 60_000;
  await Promise.all(Array.from({ length: WORKERS }, () => worker(service, deadline)));
  clearInterval(progress);
  clearInterval(sampler);
}

function printReport(report) {
  const { errors } = stats;
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
  for (const [what, items] of Object.entries(report.leftovers)) {
    console.log(`  ${what}: ${items.length === 0 ? 'none' : JSON.stringify(items)}`);
  }
}

async function main() {
  console.log(`soak: ${MINUTES} min, ${WORKERS} workers, node ${nodeId}`);
  const service = { ...(await startService(soak)), previewDomain: soak.previewDomain };
  // The host set-up is done once the agent listens: what is there now must be there after.
  const rulesBefore = firewallRules();
  await soakFor(service);
  const ranMin = (Date.now() - stats.startedAt) / 60_000;

  // Sessions whose delete failed: deleted again, then the services stopped as their service
  // manager would (the agent removes its warm pool on the way).
  const undeleted = [...live];
  for (const id of undeleted) {
    await call(service, 'DELETE', `/sessions/${id}`).catch(() => undefined);
  }
  await sleep(2000);
  const { agent, gateway, edge } = service.processes;
  for (const child of [edge, gateway, agent]) await exited(child, 'SIGTERM');
  const left = await leftovers(soak, rulesBefore);

  const report = {
    kind: 'soak',
    at: new Date().toISOString(),
    machine: machine(),
    minutes: Math.round(ranMin * 10) / 10,
    workers: WORKERS,
    windowS: WINDOW_S,
    journeys,
    errors: Object.fromEntries([...stats.errors].sort()),
    loggedErrors: Object.fromEntries([...loggedErrors].sort()),
    undeletedAtEnd: undeleted.length,
    latencies: stats.windowsReport(),
    rss: stats.rssReport(),
    rssSamples: stats.rssSamples,
    leftovers: left,
  };
  printReport(report);
  const path =
    process.env.SOAK_JSON ?? join(dirname(fileURLToPath(import.meta.url)), 'results', 'soak.json');
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`\nJSON: ${path}\nservice logs: ${logDir}`);
  for (const dir of Object.values(soak.dirs)) await rm(dir, { recursive: true, force: true });
  if (Object.values(left).some((items) => items.length > 0)) process.exitCode = 1;
}

await main();
