// Fork-bomb containment on the runtime under test (issue 39): a session forks until its
// process limit refuses it, while a neighbour session runs `echo` one after another. Rows:
// the neighbour's latency before (the baseline) and during the bomb, the kill of everything in
// the attacker (POST /v1/execution/kill), and how long until the attacker answers again.
import { readFile } from 'node:fs/promises';
import { docker, elapsedMs, row, sessionContainer, sleep } from './lib.mjs';

/**
 * How long the neighbour's runs are timed, before the bomb and during it: the same span, so that
 * the two p99s are read from as many runs (a p99 of 20 runs is their largest but one).
 */
const SPAN_MS = 8000;

/** The container's pids cgroup counted a refused fork (v1 or v2), or 30 s went by. */
async function untilForkRefused(sessionId) {
  const found = await sessionContainer(sessionId);
  const { State } = await docker.getContainer(found.Id).inspect();
  const cgroups = await readFile(`/proc/${State.Pid}/cgroup`, 'utf8');
  const v1 = /^\d+:pids:(.*)$/m.exec(cgroups)?.[1];
  const v2 = /^0::(.*)$/m.exec(cgroups)?.[1];
  const events =
    v1 !== undefined ? `/sys/fs/cgroup/pids${v1}/pids.events` : `/sys/fs/cgroup${v2}/pids.events`;
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(100)) {
    const text = await readFile(events, 'utf8').catch(() => '');
    if (Number(/^max (\d+)$/m.exec(text)?.[1] ?? 0) > 0) return true;
  }
  return false;
}

/** `echo` runs in `sessionId`, one after another, until `more()` says no: their latencies. */
async function echoes(stack, sessionId, more) {
  const times = [];
  while (more(times.length)) {
    const started = process.hrtime.bigint();
    await stack.api('/execute', { sessionId, command: 'echo ok', timeout: 30 });
    times.push(elapsedMs(started));
  }
  return times;
}

export async function forkBombRows(stack) {
  const create = async () => JSON.parse(await stack.api('/sessions/create', {})).sessionId;
  const neighbour = await create();
  const attacker = await create();
  try {
    await echoes(stack, neighbour, (n) => n < 3); // warm
    const quietUntil = Date.now() + SPAN_MS;
    const quiet = await echoes(stack, neighbour, () => Date.now() < quietUntil);
    const before = row('baseline: neighbour `echo`, no attack', quiet.length, quiet);
    // The bomb's own run ends at its timeout; its processes live on, capped, until killed.
    const bomb = stack
      .api('/execute', { sessionId: attacker, command: ':(){ :|:& };:', timeout: 6 })
      .catch(() => undefined);
    const until = Date.now() + SPAN_MS;
    const during = await echoes(stack, neighbour, () => Date.now() < until);
    const refused = await untilForkRefused(attacker);
    await bomb;
    const killStarted = process.hrtime.bigint();
    const killed = JSON.parse(await stack.api('/execution/kill', { sessionId: attacker })).killed;
    const killMs = elapsedMs(killStarted);
    const answerStarted = process.hrtime.bigint();
    for (;;) {
      const answer = await stack
        .api('/execute', { sessionId: attacker, command: 'echo back', timeout: 10 })
        .catch(() => '');
      if (answer.includes('back')) break;
      await sleep(50);
    }
    const backMs = elapsedMs(answerStarted);
    const duringRow = row('fork bomb: neighbour `echo` during the attack', during.length, during, {
      baseline: before,
    });
    // The target is on the tail: the neighbour's p99 within 2× of its p99 without the attack.
    duringRow.p99Ratio = Number((duringRow.p99 / before.p99).toFixed(2));
    duringRow.note = `p99 ${duringRow.p99Ratio}× of the baseline's`;
    return [
      before,
      duringRow,
      row('fork bomb: kill of all its processes (answered)', 1, [killMs], {
        killed,
        limitReached: refused,
      }),
      row('fork bomb: attacker answers `echo` again, after the kill', 1, [backMs]),
    ];
  } finally {
    for (const id of [neighbour, attacker]) await stack.deleteSession(id).catch(() => undefined);
  }
}
