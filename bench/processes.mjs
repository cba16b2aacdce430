// The bench's parts in processes of their own, as deployed: a service's `main.js` (the agent,
// the gateway, the edge proxy), the HTTP load generator; and the clean-up of a stopped agent's
// mounts.
// Shared through lib.mjs.
import { execFile, fork, spawn } from 'node:child_process';
import { mkdir, open, readFile, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';

const require = createRequire(import.meta.url);
const run = promisify(execFile);
const grpc = require('../services/agent/node_modules/@grpc/grpc-js');
const { loadAgentProto } = require('../packages/proto/dist/index.js');
const { INTERNAL_TOKEN_METADATA_KEY } = require('../packages/contract/dist/index.js');

export const PREVIEW_DOMAIN = 'preview.bench';

/** Lazily unmounts every filesystem mounted under `dir` (a stopped agent's). */
export async function unmountUnder(dir) {
  const mounts = (await readFile('/proc/self/mounts', 'utf8'))
    .split('\n')
    .map((line) => line.split(' ')[1] ?? '')
    .filter((mount) => mount.startsWith(`${dir}/`));
  for (const mount of mounts) await run('umount', ['-l', mount]).catch(() => undefined);
}

/**
 * The Node a service runs on: the bench's own, or BENCH_NODE's, to measure another release
 * beside it (ADR 56's Node 24 was measured so).
 */
const serviceNode = () => process.env.BENCH_NODE || process.execPath;

/**
 * Node's arguments for a service's `main.js`: with BENCH_CPU_PROF=<dir>, its CPU profile there;
 * BENCH_FLAGS_<SERVICE> (BENCH_FLAGS_GATEWAY, _AGENT, _EDGE_PROXY) adds node flags of its own,
 * for experiments (`--trace-gc`, `--single-threaded-gc`: flags NODE_OPTIONS does not take).
 */
function serviceArgv(service) {
  const profile = process.env.BENCH_CPU_PROF;
  const name = service.split('/')[1].toUpperCase().replaceAll('-', '_');
  const flags = process.env[`BENCH_FLAGS_${name}`]?.split(' ').filter(Boolean) ?? [];
  return [
    ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : []),
    ...flags,
    fileURLToPath(new URL(`../${service}/dist/main.js`, import.meta.url)),
  ];
}

/**
 * A service's `main.js` (e.g. `services/agent`) in a process of its own with `env`, as
 * deployed; resolves with the process and the first log entry whose `msg` is `ready` (its
 * listening line). `onLog` sees every log entry after that. BENCH_CPU_PROF=<dir> writes its
 * CPU profile there. `ownGroup`: in a process group of its own, out of the terminal's ^C, for
 * a service the bench stops itself, in order, on that ^C (live-stacks.mjs).
 */
export async function startServiceProcess(
  service,
  env,
  ready,
  timeoutMs,
  onLog,
  { ownGroup = false } = {},
) {
  const child = spawn(serviceNode(), serviceArgv(service), {
    env: { PATH: process.env.PATH, ...env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: ownGroup,
  });
  const lines = createInterface({ input: child.stdout });
  const entry = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${service} did not start`)), timeoutMs);
    child.once('exit', (code) => reject(new Error(`${service} exited (${code})`)));
    let started = false;
    lines.on('line', (line) => {
      let logged;
      try {
        logged = JSON.parse(line);
      } catch {
        return;
      }
      if (started) onLog?.(logged);
      else if (logged.msg === ready) {
        started = true;
        clearTimeout(timer);
        resolve(logged);
      }
    });
  }).catch(async (err) => {
    await exited(child, 'SIGKILL');
    throw err;
  });
  return { child, entry };
}

/**
 * An agent in a process of its own (services/agent/dist/main.js, as deployed) with `env`, and
 * a gRPC client of it: `nodeInfo()`, `destroy(sessionId)`, `stop()` (SIGTERM, as its service
 * manager would).
 */
export async function startAgentProcess(env, token, onLog) {
  // Its errors (or what BENCH_AGENT_LOG_LEVEL asks for, e.g. 30) reach the bench's stderr.
  const shownLevel = Number(process.env.BENCH_AGENT_LOG_LEVEL ?? 50);
  const { child, entry } = await startServiceProcess(
    'services/agent',
    env,
    'agent listening',
    60_000,
    (logged) => {
      if (logged.level >= shownLevel) console.error(`agent: ${JSON.stringify(logged)}`);
      onLog?.(logged);
    },
    // Its pool is removed by its own stop: a ^C must not end it first.
    { ownGroup: true },
  );
  const { address } = entry;
  const Agent = loadAgentProto().agent.v1.Agent;
  const client = new Agent(address, grpc.credentials.createInsecure());
  const unary = (method, request) =>
    new Promise((resolve, reject) => {
      const metadata = new grpc.Metadata();
      metadata.set(INTERNAL_TOKEN_METADATA_KEY, `Bearer ${token}`);
      client[method](request, metadata, (err, reply) => (err ? reject(err) : resolve(reply)));
    });
  return {
    address,
    pid: child.pid,
    nodeInfo: () => unary('getNodeInfo', {}),
    destroy: (sessionId) => unary('destroySandbox', { sessionId }),
    async stop() {
      client.close();
      await exited(child, 'SIGTERM');
    },
  };
}

/**
 * A gateway in a process of its own (services/gateway/dist/main.js) with `env`, as
 * ./scripts/up runs it: logging at info (each request a line) into `logFile`, as the script's
 * supervisor writes its log. Resolves once it listens: `{ url, pid, stop() }`. BENCH_CPU_PROF
 * writes its CPU profile there.
 */
export async function startGatewayProcess(env, logFile) {
  const log = await open(logFile, 'a', 0o600);
  let child;
  try {
    child = spawn(serviceNode(), serviceArgv('services/gateway'), {
      env: { PATH: process.env.PATH, LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', log.fd, 'inherit'],
      detached: true, // stopped by the bench, before its agent (live-stacks.mjs)
    });
  } finally {
    await log.close(); // the child has its own copy
  }
  for (const deadline = Date.now() + 60_000; ; await sleep(50)) {
    const listening = (await readFile(logFile, 'utf8'))
      .split('\n')
      .map((line) => {
        try {
          return JSON.parse(line);
        } catch {
          return undefined;
        }
      })
      .find((entry) => entry?.msg === 'gateway listening');
    if (listening !== undefined) {
      return { url: listening.url, pid: child.pid, stop: () => exited(child, 'SIGTERM') };
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      await exited(child, 'SIGKILL');
      throw new Error(`the gateway did not start; see ${logFile}`);
    }
  }
}

/** Waits for a child process to exit (after `signal`, when it is given and it still runs). */
export function exited(child, signal) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const done = new Promise((resolve) => child.once('exit', resolve));
  if (signal) child.kill(signal);
  return done;
}

/**
 * An edge proxy in a process of its own (services/edge-proxy/dist/main.js, as deployed) for
 * `stack`, on a free loopback port. BENCH_CPU_PROF=<dir> writes its CPU profile there.
 */
export async function startEdgeProcess(stack) {
  const { child, entry } = await startServiceProcess(
    'services/edge-proxy',
    {
      EDGE_HOST: '127.0.0.1',
      EDGE_PORT: '0',
      PREVIEW_DOMAIN,
      GATEWAY_INTERNAL_URL: stack.url,
      INTERNAL_TOKEN: stack.internalToken,
    },
    'edge proxy listening',
    10_000,
  );
  const { url } = entry;
  return {
    url,
    pid: child.pid,
    /** Stops it as its service manager would (SIGTERM), which also writes its profile. */
    stop: () => exited(child, 'SIGTERM'),
  };
}

/** The bench's load generator (bench/http-load.mjs) in a process of its own. */
export function startHttpLoad() {
  const child = fork(fileURLToPath(new URL('./http-load.mjs', import.meta.url)), {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let queue = Promise.resolve();
  const ask = (message) => {
    const answer = queue.then(
      () =>
        new Promise((resolve, reject) => {
          const onExit = (code) => reject(new Error(`the load generator exited (${code})`));
          child.once('exit', onExit);
          child.once('message', (reply) => {
            child.off('exit', onExit);
            if (reply.error) reject(new Error(reply.error));
            else resolve(reply.row);
          });
          child.send(message);
        }),
    );
    queue = answer.catch(() => undefined);
    return answer;
  };
  return {
    /** One GET at a time: p50 and p99 of `rounds` after `warmup`. `target`: { origin, host? }. */
    latency: (name, target, rounds, warmup) => ask({ op: 'latency', name, target, rounds, warmup }),
    /** `clients` concurrent keep-alive clients, bounded by `maxRequests` and `maxMs`. */
    throughput: (name, target, { clients, maxRequests, maxMs }) =>
      ask({ op: 'throughput', name, target, clients, maxRequests, maxMs }),
    async stop() {
      if (child.connected) child.disconnect();
      await exited(child, 'SIGTERM');
    },
  };
}

/**
 * BENCH_CPU_PROF=<dir>: a CPU profile of this process (the gateway, and the bench's client of
 * it) from a stack's start to its stop, `gateway-<node id>.cpuprofile` there; the processes of
 * their own (agent, edge proxy) write theirs beside it. Resolves to the function that stops it.
 */
export async function profileGateway(nodeId) {
  const dir = process.env.BENCH_CPU_PROF;
  if (!dir) return async () => undefined;
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, `gateway-${nodeId}.cpuprofile`), JSON.stringify(profile));
  };
}
