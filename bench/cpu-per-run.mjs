// pnpm bench:cpu: the CPU one run costs in each process of the chain, read from /proc and the
// container's cpuacct group before and after: the bench's process (the client), the gateway
// and the agent (processes of their own, as ./scripts/up runs them), and in the sandbox the
// runner's front, the spawner with the shells it reaped, and the whole group; Redis, dockerd
// and containerd beside them (machine-wide: other work on the machine shows there). Rows:
// `true` one at a time in one session (BENCH_CPU_TRUE_RUNS), and `echo` from
// BENCH_CPU_SESSIONS sessions at once, one client each (BENCH_CPU_ECHO_RUNS in all), and
// (`shell`, not by default) the same in a shell context of each session (ADR 59);
// BENCH_CPU_ROWS=true,echo,shell picks them.
// BENCH_CPU_STRACE=<prefix> counts the agent's and the front's syscalls during the `true` row
// (`strace -c`; BENCH_CPU_STRACE_LOG=1 logs them instead); BENCH_CPU_ECHO_WARMUP runs per
// session come before the `echo` row (5). Prints JSON; loopback only. CPU per
// run moves with the machine's load: compare builds only within one run, alternated.
import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { elapsedMs, percentile, sessionContainer, startBenchStack } from './lib.mjs';
import { closedLoopOf } from './timing.mjs';

const TRUE_RUNS = Number(process.env.BENCH_CPU_TRUE_RUNS ?? 300);
const SESSIONS = Number(process.env.BENCH_CPU_SESSIONS ?? 30);
const ECHO_RUNS = Number(process.env.BENCH_CPU_ECHO_RUNS ?? 3000);
// Runs per session before the `echo` row is measured. The default's row includes the agent's
// warm-up: its JIT compiling, and the first 32 logs of each new session made as new files.
const ECHO_WARMUP = Number(process.env.BENCH_CPU_ECHO_WARMUP ?? 5);
const ROWS = (process.env.BENCH_CPU_ROWS ?? 'true,echo').split(',');
const TICK_MS = 1000 / Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());

/** utime+stime and cutime+cstime of `pid`, in ms (undefined: gone). */
function cpuOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const [utime, stime, cutime, cstime] = fields.slice(11, 15).map(Number);
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    return { comm, self: (utime + stime) * TICK_MS, children: (cutime + cstime) * TICK_MS };
  } catch {
    return undefined;
  }
}

/** The pids in `containerId`'s cgroup (its cpuacct group and below). */
function containerPids(containerId) {
  const pids = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cgroup`, 'utf8').includes(containerId)) pids.push(name);
    } catch {
      // gone
    }
  }
  return pids;
}

const cgroupUsageMs = (containerId) =>
  Number(readFileSync(`/sys/fs/cgroup/cpuacct/docker/${containerId}/cpuacct.usage`, 'utf8')) / 1e6;

/** A reading of every process measured. */
function snapshot({ agentPid, gatewayPid }, containerIds) {
  const byName = new Map();
  const add = (name, ms) => byName.set(name, (byName.get(name) ?? 0) + ms);
  const own = process.cpuUsage();
  add('bench (client)', (own.user + own.system) / 1000);
  add('gateway', cpuOf(gatewayPid).self);
  add('agent', cpuOf(agentPid).self);
  for (const id of containerIds) {
    add('sandbox (cgroup)', cgroupUsageMs(id));
    for (const pid of containerPids(id)) {
      const cpu = cpuOf(pid);
      if (cpu === undefined) continue;
      if (cpu.comm === 'front') add('front', cpu.self);
      else if (cpu.comm === 'run-spawner') add('spawner (+reaped)', cpu.self + cpu.children);
      else if (cpu.comm === 'node' || cpu.comm === 'MainThread') add('runner (node)', cpu.self);
      else if (cpu.comm === 'bash') add('shells (bash, alive)', cpu.self);
    }
  }
  for (const comm of ['dockerd', 'containerd', 'redis-server']) {
    for (const pid of execFileSync('pgrep', ['-x', comm]).toString().trim().split('\n')) {
      add(comm, cpuOf(pid)?.self ?? 0);
    }
  }
  return byName;
}

function perRun(before, after, runs) {
  const out = {};
  for (const [name, ms] of after)
    out[name] = Number(((ms - (before.get(name) ?? 0)) / runs).toFixed(3));
  return out;
}

const agentPidOf = () =>
  execFileSync('pgrep', ['-P', String(process.pid), '-f', 'services/agent/dist/main.js'])
    .toString()
    .trim()
    .split('\n')[0];

async function main() {
  const stack = await startBenchStack({
    pool: process.env.BENCH_POOL,
    agentProcess: true,
    gatewayProcess: true,
  });
  const agentPid = agentPidOf();
  const pids = { agentPid, gatewayPid: stack.gatewayPid };
  const report = {
    load: loadavg()
      .map((l) => l.toFixed(2))
      .join(' '),
    rows: {},
  };
  try {
    if (ROWS.includes('true')) {
      const sessionId = JSON.parse(await stack.api('/sessions/create', {})).sessionId;
      const container = (await sessionContainer(sessionId)).Id;
      // For a profiler: the processes of the row (`perf record -p`).
      console.error(JSON.stringify({ agentPid, pids: containerPids(container).map(Number) }));
      const run = () => stack.api('/execute', { sessionId, command: 'true' });
      for (let i = 0; i < 20; i += 1) await run();
      const tracer = process.env.BENCH_CPU_STRACE ? traceSyscalls(agentPid, container) : undefined;
      if (tracer) await new Promise((resolve) => setTimeout(resolve, 1000));
      const before = snapshot(pids, [container]);
      const times = [];
      for (let i = 0; i < TRUE_RUNS; i += 1) {
        const begun = process.hrtime.bigint();
        await run();
        times.push(elapsedMs(begun));
      }
      const after = snapshot(pids, [container]);
      if (tracer) await tracer.stop();
      times.sort((a, b) => a - b);
      report.rows.true = {
        p50: percentile(times, 50).toFixed(2),
        p99: percentile(times, 99).toFixed(2),
        cpuMsPerRun: perRun(before, after, TRUE_RUNS),
      };
      await stack.deleteSession(sessionId);
    }
    if (ROWS.includes('echo')) report.rows.echo = await echoRow(stack, pids);
    if (ROWS.includes('shell')) report.rows.shell = await echoRow(stack, pids, { shell: true });
  } finally {
    await stack.stop();
  }
  console.log(JSON.stringify(report, null, 1));
}

/** strace -c of the agent (its threads) and the front while the row runs: its syscalls per run. */
function traceSyscalls(agentPid, container) {
  const front = containerPids(container).find((pid) => cpuOf(pid)?.comm === 'front');
  const out = process.env.BENCH_CPU_STRACE;
  const tracers = [
    spawn(
      'strace',
      [
        ...(process.env.BENCH_CPU_STRACE_LOG ? ['-tt', '-s', '80'] : ['-c']),
        '-f',
        '-o',
        `${out}-agent.txt`,
        '-p',
        agentPid,
      ],
      { stdio: 'ignore' },
    ),
    spawn('strace', ['-c', '-f', '-o', `${out}-front.txt`, '-p', front], { stdio: 'ignore' }),
  ];
  return {
    stop: () =>
      Promise.all(
        tracers.map(
          (t) =>
            new Promise((resolve) => {
              t.once('exit', resolve);
              t.kill('SIGINT');
            }),
        ),
      ),
  };
}

/** `echo` from SESSIONS sessions at once; with `shell`, in a shell context of each (ADR 59). */
async function echoRow(stack, pids, { shell = false } = {}) {
  const ids = [];
  for (let i = 0; i < SESSIONS; i += 1) {
    ids.push(JSON.parse(await stack.api('/sessions/create', {})).sessionId);
  }
  const containers = await Promise.all(ids.map(async (id) => (await sessionContainer(id)).Id));
  const contexts = new Map();
  for (const id of shell ? ids : []) {
    const made = JSON.parse(await stack.api(`/sessions/${id}/contexts`, { language: 'bash' }));
    contexts.set(id, made.contextId);
  }
  const run = (sessionId) =>
    stack.api('/execute', {
      sessionId,
      command: 'echo hello',
      ...(shell ? { contextId: contexts.get(sessionId) } : {}),
    });
  await Promise.all(
    ids.map(async (id) => {
      for (let i = 0; i < ECHO_WARMUP; i += 1) await run(id);
    }),
  );
  const before = snapshot(pids, containers);
  const { times, seconds } = await closedLoopOf(ids, ECHO_RUNS, run);
  const after = snapshot(pids, containers);
  await Promise.all(ids.map((id) => stack.deleteSession(id)));
  return {
    perSecond: (times.length / seconds).toFixed(0),
    p50: percentile(times, 50).toFixed(1),
    p99: percentile(times, 99).toFixed(1),
    cpuMsPerRun: perRun(before, after, times.length),
  };
}

await main();
