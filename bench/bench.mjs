// pnpm bench: latency of the whole stack (HTTP → gateway → gRPC → agent → runner → process),
// each row next to its baseline measured in the same run: a bare `docker run` for creates, a
// bare `docker exec` and a direct spawn inside the container for runs, a direct GET for
// previews. Sequential (one request at a time); pnpm bench:load has the concurrent rows.
// BENCH_ROUNDS (default 100) bounds every row; BENCH_EGRESS_FIREWALL=off starts the agents
// without their egress firewall; BENCH_ONLY (a comma list of sections: create, run, preview,
// wake) runs only those sections' rows.
import { Agent, request } from 'node:http';
import {
  docker,
  elapsedMs,
  machine,
  measure,
  PREVIEW_DOMAIN,
  printTable,
  row,
  sessionContainer,
  sleep,
  startBenchStack,
  writeJson,
} from './lib.mjs';
import { wakeRows } from './wake.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 100);
const CREATE_ROUNDS = Math.min(ROUNDS, 20);
const CODE_ROUNDS = Math.min(ROUNDS, 40);
const WAKE_ROUNDS = Number(process.env.BENCH_WAKE_ROUNDS ?? 8);
const POOL_SIZE = 4;
const PACE_MS = 500;
// Load for the throughput rows: this many keep-alive clients, until either bound is reached.
const LOAD_CLIENTS = 16;
const LOAD_MAX_REQUESTS = 3000;
const LOAD_MAX_MS = 3000;
const PREVIEW_PORT = 3000;
const SECTIONS = ['create', 'run', 'preview', 'wake'];
const ONLY = (process.env.BENCH_ONLY ?? SECTIONS.join(',')).split(',').map((s) => s.trim());
for (const section of ONLY) {
  if (!SECTIONS.includes(section))
    throw new Error(`BENCH_ONLY: unknown section ${section} (${SECTIONS.join(', ')})`);
}
const TYPED_CODE =
  'interface Point { x: number; y: number }\nconst p: Point = { x: 1, y: 2 };\nconst sum = (a: Point): number => a.x + a.y;\nconsole.log(sum(p));';

/**
 * LOAD_CLIENTS concurrent callers of `fn` until LOAD_MAX_REQUESTS have been sent or
 * LOAD_MAX_MS have passed; requests per second and latencies.
 */
async function throughput(name, fn) {
  await Promise.all(Array.from({ length: LOAD_CLIENTS }, () => fn())); // open the connections
  const times = [];
  let sent = 0;
  const started = process.hrtime.bigint();
  const deadline = performance.now() + LOAD_MAX_MS;
  const client = async () => {
    while (sent < LOAD_MAX_REQUESTS && performance.now() < deadline) {
      sent += 1;
      const begun = process.hrtime.bigint();
      await fn();
      times.push(elapsedMs(begun));
    }
  };
  await Promise.all(Array.from({ length: LOAD_CLIENTS }, client));
  return row(name, times.length, times, { perSecond: times.length / (elapsedMs(started) / 1000) });
}

/** GET / on `origin` (optionally with another Host header); fails unless it answers 200 "ok". */
function httpGet(agent, origin, host) {
  return new Promise((resolve, reject) => {
    const req = request(
      { agent, host: origin.hostname, port: origin.port, path: '/', headers: host ? { host } : {} },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () =>
          res.statusCode === 200 && body === 'ok'
            ? resolve()
            : reject(
                new Error(`GET ${host ?? origin.host}: ${res.statusCode} ${body.slice(0, 200)}`),
              ),
        );
      },
    );
    req.setTimeout(5000, () => req.destroy(new Error(`GET ${host ?? origin.host}: timed out`)));
    req.on('error', reject);
    req.end();
  });
}

/** Runs `cmd` in the container through the Engine API and waits for it to end. */
async function dockerExec(containerId, cmd) {
  const exec = await docker
    .getContainer(containerId)
    .exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true, User: '1000:1000' });
  const stream = await exec.start({ hijack: true, stdin: false });
  const chunks = [];
  stream.on('data', (c) => chunks.push(c));
  await new Promise((resolve) => {
    stream.on('end', resolve);
    stream.on('close', resolve);
  });
  return Buffer.concat(chunks).toString('latin1');
}

/** `argv` spawned `rounds` times by a Node inside the container, timed in there (ms). */
async function spawnInside(containerId, name, argv, rounds) {
  const script = `const {spawnSync}=require('child_process');const t=[];for(let i=0;i<${rounds};i++){const s=process.hrtime.bigint();spawnSync(${JSON.stringify(argv[0])},${JSON.stringify(argv.slice(1))});t.push(Number(process.hrtime.bigint()-s)/1e6)}t.sort((a,b)=>a-b);console.log(JSON.stringify({p50:t[Math.floor(t.length/2)],p99:t[Math.min(t.length-1,Math.floor(t.length*0.99))]}))`;
  const out = await dockerExec(containerId, ['node', '-e', script]);
  const json = out.replace(/[^\x20-\x7e]/g, '').match(/\{.*\}/)[0];
  return { name, rounds, ...JSON.parse(json) };
}

/** A bare `docker run` of the sandbox image: create and start (the removal is not timed). */
async function bareDockerRun(image) {
  const made = [];
  const result = await measure(
    'baseline: docker run (create + start, Engine API)',
    CREATE_ROUNDS,
    async () => {
      const container = await docker.createContainer({
        Image: image,
        Cmd: ['sleep', 'infinity'],
        User: '1000:1000',
        HostConfig: { Init: true, Memory: 1024 * 2 ** 20, NanoCpus: 0.25e9 },
      });
      made.push(container);
      await container.start();
    },
    { warmup: 2 },
  );
  for (const container of made) await container.remove({ force: true }).catch(() => undefined);
  return result;
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

/** Creates from the warm pool and without one, against a bare `docker run`. */
async function createRows(stack, results, created) {
  const dockerRun = await bareDockerRun(stack.agentConfig.sandboxImage);
  results.push(dockerRun);
  results.push(
    await measure(
      'session create (warm pool)',
      CREATE_ROUNDS,
      async () => created.push(JSON.parse(await stack.api('/sessions/create', {})).sessionId),
      { before: () => stack.poolReady(POOL_SIZE), baseline: dockerRun },
    ),
  );
  // Creates without a pool, as before it: a stack of its own.
  const cold = await startBenchStack({ pool: '0', name: 'bench-cold' });
  try {
    results.push(
      await measure(
        'session create (no pool)',
        Math.min(CREATE_ROUNDS, 10),
        async () => created.push(JSON.parse(await cold.api('/sessions/create', {})).sessionId),
        { warmup: 2, baseline: dockerRun },
      ),
    );
  } finally {
    await cold.stop();
  }
}

/** Commands, code runs, streaming and files in one session, against direct spawns. */
async function runRows(stack, sessionId, results) {
  const container = await sessionContainer(sessionId);
  const bareExec = await measure('baseline: docker exec "true" (Engine API)', ROUNDS, () =>
    dockerExec(container.Id, ['true']),
  );
  const spawnTrue = await spawnInside(
    container.Id,
    'baseline: direct spawn of "true" in the container',
    ['true'],
    ROUNDS,
  );
  const spawnNode = await spawnInside(
    container.Id,
    'baseline: direct spawn of node -e "console.log(1)" in the container',
    ['node', '-e', 'console.log(1)'],
    Math.min(ROUNDS, 20),
  );
  results.push(bareExec, spawnTrue, spawnNode);
  results.push(
    await measure(
      'execute command "true"',
      ROUNDS,
      () => stack.api('/execute', { sessionId, command: 'true' }),
      { baseline: bareExec },
    ),
  );
  const execCode = (body) => async () => {
    const result = JSON.parse(await stack.api('/execute', { sessionId, ...body }));
    if (result.exitCode !== 0) throw new Error(`code run failed: ${result.stderr}`);
  };
  // A code run's next Node starts after it: a caller's own pace (an agent thinking between
  // tool calls) leaves it that time. Back to back, each run waits for it.
  const pace = () => sleep(PACE_MS);
  results.push(
    await measure(
      `execute code console.log(1), ${PACE_MS} ms apart`,
      CODE_ROUNDS,
      execCode({ code: 'console.log(1)' }),
      { before: pace, baseline: spawnNode },
    ),
  );
  results.push(
    await measure(
      `execute TypeScript with types, ${PACE_MS} ms apart`,
      CODE_ROUNDS,
      execCode({ code: TYPED_CODE }),
      { before: pace, baseline: spawnNode },
    ),
  );
  results.push(
    await measure(
      'execute code console.log(1), back to back',
      CODE_ROUNDS,
      execCode({ code: 'console.log(1)' }),
      { baseline: spawnNode },
    ),
  );
  results.push(
    await measure(
      `execute code in a Node of its own (as before the zygote), ${PACE_MS} ms apart`,
      Math.min(CODE_ROUNDS, 20),
      execCode({ code: 'console.log(1)', env: { NODE_BENCH: '1' } }),
      { before: pace, baseline: spawnNode },
    ),
  );
  results.push(...(await firstByte(stack, sessionId)));
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

/** A preview app through the edge proxy, against direct GETs. */
async function previewRows(stack, sessionId, results, loads) {
  const container = await sessionContainer(sessionId);
  const edgeClients = new Agent({ keepAlive: true, maxSockets: LOAD_CLIENTS });
  const directClients = new Agent({ keepAlive: true, maxSockets: LOAD_CLIENTS });
  try {
    // Previews: a tiny app on port 3000 of the session, through the edge proxy (which asks the
    // gateway for the route) and straight to the container's bridge address.
    await stack.api('/execute', {
      sessionId,
      command: `nohup node -e "require('http').createServer((q,s)=>s.end('ok')).listen(${PREVIEW_PORT})" >/dev/null 2>&1 & for i in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/${PREVIEW_PORT}) 2>/dev/null && break; sleep 0.1; done`,
    });
    const inspected = await docker.getContainer(container.Id).inspect();
    const ip = inspected.NetworkSettings.Networks[stack.agentConfig.sandboxNetwork]?.IPAddress;
    if (!ip) throw new Error(`no address on ${stack.agentConfig.sandboxNetwork}`);
    const edgeOrigin = new URL(stack.edge.url);
    const previewHost = `${sessionId.replace('_', '-')}.${PREVIEW_DOMAIN}`;
    const directOrigin = new URL(`http://${ip}:${PREVIEW_PORT}`);
    const throughEdge = () => httpGet(edgeClients, edgeOrigin, previewHost);
    const direct = () => httpGet(directClients, directOrigin);
    const directRow = await measure('baseline: direct GET to the container', ROUNDS, direct);
    results.push(directRow);
    results.push(
      await measure('preview GET through edge proxy', ROUNDS, throughEdge, { baseline: directRow }),
    );
    const directLoad = await throughput('baseline: direct GET to the container', direct);
    loads.push(directLoad);
    loads.push({
      ...(await throughput('preview GET through edge proxy', throughEdge)),
      baseline: directLoad,
    });
  } finally {
    edgeClients.destroy();
    directClients.destroy();
  }
}

async function main() {
  const results = [];
  const loads = [];
  const stack = await startBenchStack({ pool: `${POOL_SIZE}:1024:0.25:1024` });
  const created = [];
  try {
    if (ONLY.includes('create')) await createRows(stack, results, created);
    if (ONLY.includes('run') || ONLY.includes('preview')) {
      const sessionId = JSON.parse(await stack.api('/sessions/create', {})).sessionId;
      created.push(sessionId);
      if (ONLY.includes('run')) await runRows(stack, sessionId, results);
      if (ONLY.includes('preview')) await previewRows(stack, sessionId, results, loads);
    }
    // Only the measured session may be due while the wakes are measured.
    for (const id of created.splice(0)) await stack.deleteSession(id);
    if (ONLY.includes('wake')) {
      await wakeRows(stack, results, { poolSize: POOL_SIZE, rounds: WAKE_ROUNDS });
    }

    console.log(`\nMachine: ${machine()}`);
    printTable('One request at a time', results);
    if (loads.length > 0) {
      printTable(
        `Throughput: ${LOAD_CLIENTS} keep-alive clients, at most ${LOAD_MAX_REQUESTS} requests or ${LOAD_MAX_MS / 1000} s`,
        loads,
      );
    }
    await writeJson(ONLY.length === SECTIONS.length ? 'bench' : `bench-${ONLY.join('-')}`, [
      ...results,
      ...loads.map((l) => ({ ...l, name: `${l.name} (load)` })),
    ]);
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
