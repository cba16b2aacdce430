// How late sessions go idle after their deadline: with the deadline timer (each replica sleeps
// until the next transition) and, as the baseline in the same run, with the periodic sweep
// alone (every 30 s, as before). Part of pnpm bench.
import { row, sleep, startBenchStack } from './lib.mjs';

const SESSIONS = 8;
const IDLE_S = 2;
const SWEEP_INTERVAL_S = 30;

/** Creates SESSIONS sessions a little apart, then watches Postgres for each one's idle state. */
async function lateness(name, gatewayEnv) {
  const stack = await startBenchStack({
    pool: `${SESSIONS}:1024:0.25:1024`,
    name: 'bench-deadlines',
    gatewayEnv: {
      SESSION_IDLE_AFTER_S: String(IDLE_S),
      SESSION_DEEP_SLEEP_AFTER_S: '3600',
      SESSION_SWEEP_INTERVAL_S: String(SWEEP_INTERVAL_S),
      ...gatewayEnv,
    },
  });
  try {
    await stack.poolReady(SESSIONS, 60_000);
    const ids = [];
    for (let i = 0; i < SESSIONS; i += 1) {
      ids.push(JSON.parse(await stack.api('/sessions/create', {})).sessionId);
      await sleep(150 + Math.random() * 300);
    }
    const late = new Map();
    const deadline = Date.now() + (IDLE_S + SWEEP_INTERVAL_S + 10) * 1000;
    while (late.size < ids.length && Date.now() < deadline) {
      const { rows } = await stack.gateway.db.query(
        `SELECT id, last_active_at FROM sessions WHERE state = 'idle' AND id = ANY($1)`,
        [ids],
      );
      const now = Date.now();
      for (const r of rows) {
        if (!late.has(r.id)) late.set(r.id, now - (r.last_active_at.getTime() + IDLE_S * 1000));
      }
      await sleep(20);
    }
    for (const id of ids) await stack.deleteSession(id);
    return row(name, late.size, [...late.values()]);
  } finally {
    await stack.stop();
  }
}

/** Two rows: the deadline timer, and the periodic sweep alone as its baseline. */
export async function transitionLateness() {
  const baseline = await lateness(
    `baseline: idle transition late after its deadline, ${SWEEP_INTERVAL_S} s sweep only`,
    { SESSION_SWEEP_AT_DEADLINES: 'false' },
  );
  const timed = await lateness('idle transition late after its deadline (deadline timer)', {
    SESSION_SWEEP_AT_DEADLINES: 'true',
  });
  return [baseline, { ...timed, baseline }];
}
