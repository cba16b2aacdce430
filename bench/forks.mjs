// pnpm bench's fork rows (ADR 43), next to baselines measured in the same run: a cold create
// on the same stack (no pool, as a fork's sandbox starts), a bare `docker run`, and a create
// from the main stack's warm pool (a fork, like a claim, is answered before its sandbox is
// ready: each is also timed with its first `true` run). Then three forks in one call, how long
// the source's writes were held while its disk was frozen (against the longest gap of the same
// writer during the cold creates, which load the machine as the forks' starts do; the agent
// logs each freeze's own length, `frozenMs`), where the agent's time of a fork goes (its own
// timestamps: clone, answer, the sandbox's start after it), and the disk a fork took on the
// node's store before it wrote.
import { statfs } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { row, startBenchStack } from './lib.mjs';
import { measure } from './timing.mjs';

const { createLogger } = createRequire(import.meta.url)('../packages/logger/dist/index.js');

const MB = 1024 * 1024;
/** A writer in the source: a timestamp appended to a file every 2 ms (it waits on a freeze). */
const WRITER =
  "nohup node -e \"const fs=require('fs');setInterval(()=>fs.appendFileSync('ticks',Date.now()+'\\n'),2)\" >/dev/null 2>&1 &";

/** The longest gap between two of the writer's ticks from `since` on (ms). */
async function longestGap(stack, sessionId, since) {
  const out = JSON.parse(
    await stack.api('/execute', {
      sessionId,
      command: `awk -v s=${since} '$1>=s{if(p)g=($1-p>g?$1-p:g);p=$1}END{print g+0}' ticks`,
    }),
  );
  return Number(out.stdout.trim());
}

/** Bytes in use on the node's disk store (the XFS filesystem that holds the images). */
async function storeUsed(stack) {
  const stats = await statfs(join(stack.agentConfig.workspaceDir, '.disks'));
  return (stats.blocks - stats.bfree) * stats.bsize;
}

/** `work`, then a first `true` in the session it names: what a caller waits for to use it. */
const thenTrue = (stack, work) => async () => {
  const sessionId = await work();
  await stack.api('/execute', { sessionId, command: 'true' });
};

/**
 * Creates from the main stack's warm pool (its create, and its create and first run), from a
 * full pool each time: the baselines of a fork answered before its sandbox is ready.
 */
async function poolBaselines(pooled, rounds) {
  const made = [];
  const create = async () => {
    const { sessionId } = JSON.parse(await pooled.api('/sessions/create', {}));
    made.push(sessionId);
    return sessionId;
  };
  try {
    await pooled.poolReady(pooled.poolSize, 120_000);
    const answered = await measure('baseline: session create (warm pool)', rounds, create, {
      warmup: 1,
    });
    await pooled.poolReady(pooled.poolSize, 120_000);
    const used = await measure(
      'baseline: session create (warm pool) + first `true` in it',
      rounds,
      thenTrue(pooled, create),
      { warmup: 1 },
    );
    return { answered, used };
  } finally {
    for (const id of made) await pooled.deleteSession(id);
  }
}

/**
 * Rows of the gateway's and the agent's own timestamps of each fork call (ms from the start of
 * the gateway's or the agent's part), as their logs give them.
 */
function timestampRows(gateway, agent) {
  const of = (logged, key) =>
    logged.filter((entry) => entry[key] !== undefined).map((entry) => entry[key]);
  const rows = [
    ['gateway: source opened (activity, awake)', of(gateway, 'openedMs')],
    ["gateway: forks' rows inserted", of(gateway, 'recordedMs')],
    ['gateway: node answered the fork', of(gateway, 'forkedMs')],
    ['gateway: rows active, answer ready', of(gateway, 'doneMs')],
    ['agent: source locked, disk frozen and cloned', of(agent, 'clonedMs')],
    ['agent: fork call answered (clone + record)', of(agent, 'answerMs')],
    ["agent: fork's sandbox start, after the answer", of(agent, 'startMs')],
  ];
  return rows.filter(([, times]) => times.length > 0).map(([name, t]) => row(name, t.length, t));
}

/**
 * The sessions a row makes on the forks' stack, deleted between rows (untimed: a row's
 * sessions are not the next row's load); `last`: those the last fork call made.
 */
function sessionsOf(stack) {
  const api = (path, body) => stack.api(path, body).then((text) => JSON.parse(text));
  const s = { made: [], last: [], source: undefined };
  s.drop = async () => {
    for (const id of s.made.splice(0)) await stack.deleteSession(id);
    s.last = [];
  };
  s.create = async () => {
    const { sessionId } = await api('/sessions/create', {});
    s.made.push(sessionId);
    return sessionId;
  };
  s.fork = (count) => async () => {
    const forked = await api(`/sessions/${s.source}/fork`, { count, processes: false });
    s.last = forked.sessions.map((session) => session.sessionId);
    s.made.push(...s.last);
    return s.last[0];
  };
  // Untimed, before a fork call: the last call's forks are started (their first run waits
  // for it), so that a call is not measured under the starts of the one before.
  s.started = async () => {
    for (const sessionId of s.last) await stack.api('/execute', { sessionId, command: 'true' });
  };
  return s;
}

/** Cold creates, and cold creates with their first run; the source's writer's longest gap. */
async function coldRows(stack, s, rounds, bare) {
  const from = Date.now();
  const cold = await measure('baseline: session create (no pool)', rounds, s.create, {
    warmup: 1,
    baseline: bare,
  });
  const gap = await longestGap(stack, s.source, from);
  await s.drop();
  const used = await measure(
    'baseline: session create (no pool) + first `true` in it',
    rounds,
    thenTrue(stack, s.create),
    { warmup: 1, baseline: bare },
  );
  await s.drop();
  const quiet = row(
    `baseline: longest gap of a writer in the source during ${rounds + 1} cold creates`,
    1,
    [gap],
  );
  return { cold, used, quiet };
}

/** The fork rows; then the source's writer's longest gap, and the disk one more fork took. */
async function forkTimings(stack, s, rounds) {
  const from = Date.now();
  const name = '(100 MB workspace)';
  const one = await measure(`fork answered, files only ${name}`, rounds, s.fork(1), {
    warmup: 1,
    before: s.started,
  });
  await s.drop();
  const used = await measure(
    `fork + first \`true\` in the fork ${name}`,
    rounds,
    thenTrue(stack, s.fork(1)),
    { warmup: 1 },
  );
  await s.drop();
  const three = await measure(`3 forks in one call ${name}`, rounds, s.fork(3), {
    warmup: 1,
    before: s.started,
  });
  const held = await longestGap(stack, s.source, from);
  const before = await storeUsed(stack);
  await s.fork(1)();
  const grew = Math.max(0, (await storeUsed(stack)) - before) / MB;
  await s.drop();
  return { one, used, three, held, grew };
}

/** The fork rows; `pooled`: the main stack (its warm pool), `dockerRun(image)`: a baseline. */
export async function forkRows(results, pooled, dockerRun, rounds) {
  // How long each fork call froze the source's disk; the agent's and gateway's timestamps.
  const frozen = [];
  const logged = [];
  const gatewayLogged = [];
  const stack = await startBenchStack({
    pool: '0',
    name: 'bench-fork',
    agentProcess: true,
    onAgentLog: (entry) => {
      if (entry.msg === 'session disk cloned') frozen.push(entry.frozenMs);
      if (entry.msg === 'session forked' || entry.msg === "fork's sandbox started") {
        logged.push(entry);
      }
    },
    // The gateway's lines, parsed, to this row's timestamps rather than to the output.
    gatewayLogger: createLogger({
      name: 'bench-gateway',
      destination: {
        write: (line) => {
          const entry = JSON.parse(line);
          if (entry.msg === 'session forked') gatewayLogged.push(entry);
        },
      },
    }),
  });
  const s = sessionsOf(stack);
  try {
    const bare = await dockerRun(stack.agentConfig.sandboxImage);
    s.source = await s.create();
    s.made.length = 0;
    for (const command of ['head -c 100000000 /dev/urandom > data.bin', WRITER]) {
      await stack.api('/execute', { sessionId: s.source, command });
    }
    // The writer's longest gap while cold creates load the machine as the forks' starts do.
    const cold = await coldRows(stack, s, rounds, bare);
    const forks = await forkTimings(stack, s, rounds);
    const pool = await poolBaselines(pooled, rounds);
    results.push(
      bare,
      cold.cold,
      pool.answered,
      pool.used,
      cold.used,
      { ...forks.one, baseline: pool.answered },
      { ...forks.used, baseline: pool.used },
      { ...forks.three, baseline: pool.answered },
      ...timestampRows(gatewayLogged, logged),
      cold.quiet,
      {
        ...row(`source writes held during ${3 * (rounds + 1)} forks (longest gap)`, 1, [
          forks.held,
        ]),
        baseline: cold.quiet,
      },
      row('source disk frozen per fork call (freeze, clones, thaw)', frozen.length, frozen),
      row('MB a fork takes on the disk store before it writes', 1, [forks.grew]),
    );
  } finally {
    for (const id of [...s.made, s.source]) if (id !== undefined) await stack.deleteSession(id);
    await stack.stop();
  }
}
