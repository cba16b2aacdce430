// The snapshot rows of pnpm bench (issue 44, ADR 44): a snapshot of a running session with a
// 100 MB workspace (random bytes, then copies of node_modules), how long its sandbox was frozen
// for it (the longest gap of a 1 ms ticker running in it, against the ticker's longest gap
// over as long a time without a snapshot), and a session created from the snapshot, next to
// a create of an empty session measured in the same run the same way (the pool refilled
// before each).
import { elapsedMs, row, sleep } from './lib.mjs';
import { WORKSPACES, filledSession } from './wake.mjs';

/** A Node in the session noting every gap of more than 5 ms between 1 ms ticks. */
const TICKER =
  "nohup node -e 'let last=Date.now();setInterval(()=>{const now=Date.now();if(now-last>5)" +
  'require("fs").appendFileSync("/tmp/gaps",now+" "+(now-last)+"\\n");last=now},1)\' >/dev/null 2>&1 &';

/** The longest gap the ticker noted that ended between `from` and `to` (epoch ms). */
async function longestGap(stack, sessionId, from, to) {
  const out = JSON.parse(
    await stack.api('/execute', { sessionId, command: 'cat /tmp/gaps 2>/dev/null || true' }),
  ).stdout;
  let longest = 0;
  for (const line of out.split('\n')) {
    const [at, gap] = line.split(' ').map(Number);
    if (at >= from && at <= to + 50 && gap > longest) longest = gap;
  }
  return longest;
}

const remove = (stack, path) =>
  fetch(`${stack.url}/v1${path}`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${stack.key}` },
  });

/** Creates of an empty session, and of one from `snapshotId`: each after the pool refilled. */
async function createRows(stack, { rounds, poolSize }, snapshotId, label) {
  const times = { empty: [], snapshot: [] };
  for (let i = 0; i < rounds; i += 1) {
    for (const kind of ['empty', 'snapshot']) {
      await stack.poolReady(poolSize);
      const started = process.hrtime.bigint();
      const body = kind === 'empty' ? {} : { snapshotId };
      const made = JSON.parse(await stack.api('/sessions/create', body));
      times[kind].push(elapsedMs(started));
      await stack.deleteSession(made.sessionId);
    }
  }
  const baseline = row(`baseline: session create (empty), same run, ${label}`, rounds, times.empty);
  return [
    baseline,
    { ...row(`session create from a snapshot, ${label}`, rounds, times.snapshot), baseline },
  ];
}

/** Pushes the snapshot rows onto `results`. */
export async function snapshotRows(stack, results, { rounds, poolSize }) {
  for (const { label, fill } of [WORKSPACES[1], WORKSPACES[2]]) {
    const sessionId = await filledSession(stack, label, fill);
    try {
      await stack.api('/execute', { sessionId, command: TICKER });
      await sleep(500);
      const took = [];
      const paused = [];
      const idle = [];
      let kept;
      for (let i = 0; i < rounds; i += 1) {
        const quiet = Date.now();
        await sleep(300);
        idle.push(await longestGap(stack, sessionId, quiet, Date.now()));
        const from = Date.now();
        const started = process.hrtime.bigint();
        const taken = JSON.parse(await stack.api(`/sessions/${sessionId}/snapshots`, {}));
        took.push(elapsedMs(started));
        paused.push(await longestGap(stack, sessionId, from, Date.now()));
        if (kept === undefined) kept = taken;
        else await remove(stack, `/snapshots/${taken.snapshotId}`);
      }
      const quietRow = row(`baseline: longest tick gap without a snapshot, ${label}`, rounds, idle);
      results.push(
        {
          ...row(`snapshot of a running session, ${label} workspace`, rounds, took),
          note: `stored ${(kept.sizeBytes / 1e6).toFixed(1)} MB`,
        },
        quietRow,
        {
          ...row(`source paused during a snapshot (longest tick gap), ${label}`, rounds, paused),
          note: `without a snapshot: ${quietRow.p50} ms p50, ${quietRow.p99} ms p99`,
        },
        ...(await createRows(stack, { rounds, poolSize }, kept.snapshotId, label)),
      );
      await remove(stack, `/snapshots/${kept.snapshotId}`);
    } finally {
      await stack.deleteSession(sessionId);
    }
  }
}
