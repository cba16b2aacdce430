// pnpm bench's fork rows (ADR 43), next to a cold create measured in the same run on the same
// stack (no pool, as a fork's sandbox starts): a files-only fork, three forks in one call, how
// long the source's writes were held while its disk was frozen (against the longest gap of the
// same writer during the cold creates, which load the machine as the forks' starts do; the
// agent logs each freeze's own length, `frozenMs`), and the disk a fork took on the node's
// store before it wrote.
import { statfs } from 'node:fs/promises';
import { join } from 'node:path';
import { row, sleep, startBenchStack } from './lib.mjs';
import { measure } from './timing.mjs';

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

export async function forkRows(results, { rounds }) {
  // How long each fork call froze the source's disk, as the agent logs it.
  const frozen = [];
  const stack = await startBenchStack({
    pool: '0',
    name: 'bench-fork',
    agentProcess: true,
    onAgentLog: (entry) => {
      if (entry.msg === 'session disk cloned') frozen.push(entry.frozenMs);
    },
  });
  const made = [];
  const api = (path, body) => stack.api(path, body).then((text) => JSON.parse(text));
  try {
    const source = (await api('/sessions/create', {})).sessionId;
    made.push(source);
    await api('/execute', {
      sessionId: source,
      command: 'head -c 100000000 /dev/urandom > data.bin',
    });
    await api('/execute', { sessionId: source, command: WRITER });
    // The writer's longest gap while cold creates load the machine as the forks' starts do.
    const createsFrom = Date.now();
    const cold = await measure(
      'baseline: session create (no pool)',
      rounds,
      async () => made.push((await api('/sessions/create', {})).sessionId),
      { warmup: 1 },
    );
    const underCreates = await longestGap(stack, source, createsFrom);
    const forksFrom = Date.now();
    const forks = (count) => async () => {
      const forked = await api(`/sessions/${source}/fork`, { count, processes: false });
      made.push(...forked.sessions.map((s) => s.sessionId));
    };
    const one = await measure('fork, files only (100 MB workspace)', rounds, forks(1), {
      warmup: 1,
      baseline: cold,
    });
    const three = await measure('3 forks in one call (100 MB workspace)', rounds, forks(3), {
      warmup: 1,
      baseline: cold,
    });
    const held = await longestGap(stack, source, forksFrom);
    const before = await storeUsed(stack);
    await forks(1)();
    const grew = Math.max(0, (await storeUsed(stack)) - before) / MB;
    const quietRow = row(
      `baseline: longest gap of a writer in the source during ${rounds + 1} cold creates`,
      1,
      [underCreates],
    );
    results.push(
      cold,
      { ...one, note: `+${grew.toFixed(1)} MB on the disk store per fork before it writes` },
      three,
      quietRow,
      {
        ...row(`source writes held during ${2 * (rounds + 1)} forks (longest gap)`, 1, [held]),
        baseline: quietRow,
      },
      row('source disk frozen per fork call (freeze, clones, thaw)', frozen.length, frozen),
    );
  } finally {
    for (const id of made) await stack.deleteSession(id);
    await stack.stop();
  }
}
