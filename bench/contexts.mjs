// pnpm bench's code context rows (ADR 42), each next to its baseline from the same run: a
// cell next to a plain `command: "true"` run, a context's create next to a plain code run
// (each starts a Node, or takes one started ahead), an idle context's memory next to an idle
// bare Node in the same container.
import { dockerExec, docker, measure, sleep } from './lib.mjs';

/** A context's spare process starts 500 ms after a create (spare-context.ts), then boots. */
const SPARE_WAIT_MS = 3000;
/** Between two code runs: the next run's Node (a zygote) starts after each. */
const CODE_GAP_MS = 1000;
/** Contexts made for the memory row (their mean is the row's figure). */
const MEMORY_CONTEXTS = 4;
/** How long a process is left alone before its memory is read (its start-up garbage collected). */
const SETTLE_MS = 3000;

/**
 * What the container's memory cgroup is charged, as it sees its own: memory.current on cgroup
 * v2; on v1, memory.stat's total_rss + total_cache (usage_in_bytes is batched per CPU).
 */
const CHARGE_SH =
  "if [ -f /sys/fs/cgroup/memory.current ]; then cat /sys/fs/cgroup/memory.current; else awk '/^total_(rss|cache) / { s += $2 } END { print s }' /sys/fs/cgroup/memory/memory.stat; fi";

/** The container's cgroup charge now, bytes. */
async function charged(containerId) {
  const out = await dockerExec(containerId, ['sh', '-c', CHARGE_SH]);
  return Number(
    out
      .replace(/[^0-9\n]/g, '')
      .trim()
      .split('\n')
      .pop(),
  );
}

/** Private memory (Private_Clean + Private_Dirty of smaps_rollup) of host pid `pid`, bytes. */
function privateBytes(pid) {
  return import('node:fs').then(({ readFileSync }) => {
    const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0);
    return (kb('Private_Clean') + kb('Private_Dirty')) * 1024;
  });
}

/**
 * An idle bare Node in the container (`node -e` waiting on a timer), started beside a shell
 * that reads its private memory and the container's charge before and after: the baseline.
 */
async function bareNodeMemory(containerId) {
  const script = [
    `before=$(${CHARGE_SH})`,
    "node -e 'setTimeout(() => {}, 60000)' & pid=$!",
    `sleep ${SETTLE_MS / 1000}`,
    `after=$(${CHARGE_SH})`,
    "priv=$(awk '/^Private_(Clean|Dirty):/ { s += $2 } END { print s * 1024 }' /proc/$pid/smaps_rollup)",
    'kill $pid',
    'echo "{\\"private\\":$priv,\\"charged\\":$((after - before))}"',
  ].join('; ');
  const out = await dockerExec(containerId, ['sh', '-c', script]);
  return JSON.parse(out.replace(/[^\x20-\x7e]/g, '').match(/\{.*\}/)[0]);
}

/** Host pids of the container's context processes (context-host.js), the spare's among them. */
async function contextPids(containerId) {
  const { Processes, Titles } = await docker
    .getContainer(containerId)
    .top({ ps_args: '-eo pid,args' });
  const pid = Titles.indexOf('PID');
  const args = Titles.length - 1;
  return Processes.filter((p) => p[args].includes('context-host.js')).map((p) => Number(p[pid]));
}

const mb = (bytes) => Math.round((bytes / 2 ** 20) * 10) / 10;
const percentiles = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
  return { p50: mb(at(0.5)), p99: mb(at(0.99)) };
};

/**
 * An idle context's memory: the private memory of each context process (the spare's among
 * them), and what the container's cgroup was charged for `MEMORY_CONTEXTS` more contexts (each
 * after a cell), per context; each next to a bare idle Node's, measured in the same container.
 */
async function memoryRows(api, containerId) {
  const bare = await bareNodeMemory(containerId);
  await sleep(SPARE_WAIT_MS);
  const before = await charged(containerId);
  const made = [];
  for (let i = 0; i < MEMORY_CONTEXTS; i += 1) {
    const contextId = await api.create();
    made.push(contextId);
    await api.cell(contextId, 'const x = 1; x + 1');
  }
  await sleep(SETTLE_MS);
  const after = await charged(containerId);
  const privates = await Promise.all((await contextPids(containerId)).map(privateBytes));
  for (const contextId of made) await api.remove(contextId);
  const unit = 'MB';
  const privateBase = {
    name: 'baseline: an idle bare Node, private memory',
    unit,
    rounds: 1,
    p50: mb(bare.private),
    p99: mb(bare.private),
  };
  const chargedBase = {
    name: 'baseline: an idle bare Node, cgroup charge',
    unit,
    rounds: 1,
    p50: mb(bare.charged),
    p99: mb(bare.charged),
  };
  const perContext = mb((after - before) / MEMORY_CONTEXTS);
  return [
    privateBase,
    {
      name: 'idle context, private memory',
      unit,
      rounds: privates.length,
      ...percentiles(privates),
      baseline: privateBase,
    },
    chargedBase,
    {
      name: 'idle context, cgroup charge (mean of more contexts)',
      unit,
      rounds: MEMORY_CONTEXTS,
      p50: perContext,
      p99: perContext,
      baseline: chargedBase,
    },
  ];
}

/** The session's contexts and cells through the API. */
function contextApi(stack, sessionId) {
  const path = `/sessions/${sessionId}/contexts`;
  return {
    create: async (body = {}) => {
      const answer = JSON.parse(await stack.api(path, body));
      if (answer.contextId === undefined)
        throw new Error(`create failed: ${JSON.stringify(answer)}`);
      return answer.contextId;
    },
    remove: (id) =>
      fetch(`${stack.url}/v1${path}/${id}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${stack.key}` },
      }),
    cell: async (contextId, code) => {
      const result = JSON.parse(await stack.api('/execute', { sessionId, contextId, code }));
      if (result.exitCode !== 0) throw new Error(`cell failed: ${JSON.stringify(result.error)}`);
    },
  };
}

/** Code contexts (ADR 42): creates, a small cell through the whole stack, an idle context. */
export async function contextRows(stack, sessionId, containerId, { rounds, createRounds }) {
  createRounds = Math.min(createRounds, 20);
  const api = contextApi(stack, sessionId);
  const execute = (body) => () => stack.api('/execute', { sessionId, ...body });
  const codeRun = await measure(
    `baseline: execute code console.log(1), ${CODE_GAP_MS} ms apart`,
    createRounds,
    execute({ code: 'console.log(1)' }),
    { before: () => sleep(CODE_GAP_MS) },
  );
  let contextId = await api.create(); // the session's first: no spare yet
  // Each create after the last one's delete and a wait for the spare (neither timed): a
  // session holds 8 at the most, and an agent thinks between its calls.
  const dropLast = async () => {
    if (contextId !== undefined) await api.remove(contextId);
    contextId = undefined;
    await sleep(SPARE_WAIT_MS);
  };
  const create = async () => (contextId = await api.create());
  const warmed = await measure('context create (warmed: the spare)', createRounds, create, {
    before: dropLast,
    warmup: 1,
    baseline: codeRun,
  });
  const cold = await measure(
    'context create, a Node of its own (env NODE_*)',
    Math.min(createRounds, 10),
    async () => (contextId = await api.create({ env: { NODE_BENCH: '1' } })),
    { before: dropLast, warmup: 1, baseline: codeRun },
  );
  if (contextId !== undefined) await api.remove(contextId);
  // A cell in a JavaScript context (no transpile), and one in a TypeScript context (esbuild).
  const js = await api.create({ language: 'javascript' });
  const ts = await api.create({ language: 'typescript' });
  for (const id of [js, ts]) await api.cell(id, 'var x = 1;');
  const cell = (id, code) => () => api.cell(id, code);
  // The cells' baseline right before them: the machine's load moves both alike.
  const commandRun = await measure(
    'baseline: execute command "true"',
    rounds,
    execute({ command: 'true' }),
  );
  const cells = await measure(
    'context cell x + 1 (JavaScript), back to back',
    rounds,
    cell(js, 'x + 1'),
    { baseline: commandRun },
  );
  const plainInTs = await measure(
    'context cell x + 1 (TypeScript context: no TypeScript syntax, no esbuild), back to back',
    rounds,
    cell(ts, 'x + 1'),
    { baseline: commandRun },
  );
  const typed = await measure(
    'context cell const n: number = x + 1; n (TypeScript), back to back',
    rounds,
    cell(ts, 'const n: number = x + 1; n'),
    { baseline: commandRun },
  );
  for (const id of [js, ts]) await api.remove(id);
  return [
    commandRun,
    codeRun,
    warmed,
    cold,
    cells,
    plainInTs,
    typed,
    ...(await memoryRows(api, containerId)),
  ];
}
