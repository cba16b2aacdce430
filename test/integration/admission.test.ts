import { sessionContainers } from '../support/stack';
import { useStackWithAccount } from '../support/use-stack';

/**
 * Admission of creates past the warm pool, and of run starts (issue 39): with one cold start
 * (one run start) at a time, a short deadline (no queue), a burst is answered at once, each
 * create or run either made whole or refused with 503 and Retry-After before anything was
 * made. Never 408, never a half-made sandbox, never a file of a refused run.
 */
const BURST = 8;
const METRICS_TOKEN = 'metrics-token-of-the-admission-test';
const t = useStackWithAccount('enterprise', {
  stack: {
    agentEnv: {
      SANDBOX_POOL: '0',
      SANDBOX_COLD_STARTS: '1',
      SANDBOX_RUN_STARTS: '1',
      SANDBOX_RUN_START_QUEUE: '0',
      METRICS_PORT: '0',
      METRICS_TOKEN,
    },
    // A create must be answered within 4 s: one cold start at a time cannot serve them all.
    gatewayEnv: { SESSION_OP_TIMEOUT_MS: '4000' },
  },
});

it('answers a burst past the pool with sessions or 503 and Retry-After, never 408, nothing half-made', async () => {
  const answers = await Promise.all(
    Array.from({ length: BURST }, () => t.api.post('/v1/sessions/create', {})),
  );
  const statuses = answers.map((a) => a.status);
  expect(statuses.every((status) => status === 200 || status === 503)).toBe(true);
  const made = answers.filter((a) => a.status === 200);
  const refused = answers.filter((a) => a.status === 503);
  expect(made.length).toBeGreaterThanOrEqual(1);
  expect(refused.length).toBeGreaterThanOrEqual(1);
  for (const answer of refused) {
    expect(answer.body).toMatchObject({ error: { code: 'service_unavailable' } });
    expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  }
  // Every session answered 200 has its sandbox, and no other sandbox was made.
  const containers = await sessionContainers(t.stack.nodeId);
  const ids = made.map((a) => (a.body as { sessionId: string }).sessionId).sort();
  expect(containers.map((c) => c.Names[0]!.replace('/sbx-', '')).sort()).toEqual(ids);
  for (const id of ids) {
    const run = await t.api.execute(id, { command: 'echo ok' });
    expect(run.body).toMatchObject({ stdout: 'ok\n', exitCode: 0 });
  }
});

it('answers a burst of runs past its starts with results or 503 and Retry-After; a refused run writes nothing', async () => {
  const sessionId = await t.api.createSession();
  // Each run writes 2 MB first: its start lasts while the others arrive.
  const big = 'x'.repeat(2_000_000);
  const answers = await Promise.all(
    Array.from({ length: BURST }, (_, i) =>
      t.api.execute(sessionId, {
        command: `wc -c < f${i}.txt`,
        files: [{ path: `f${i}.txt`, content: big }],
      }),
    ),
  );
  expect(answers.map((a) => a.status).every((s) => s === 200 || s === 503)).toBe(true);
  const ran = answers.flatMap((a, i) => (a.status === 200 ? [i] : []));
  const refused = answers.filter((a) => a.status === 503);
  expect(ran.length).toBeGreaterThanOrEqual(1);
  expect(refused.length).toBeGreaterThanOrEqual(1);
  for (const i of ran) expect(answers[i]?.body).toMatchObject({ stdout: '2000000\n', exitCode: 0 });
  for (const answer of refused) {
    expect(answer.body).toMatchObject({ error: { code: 'service_unavailable' } });
    expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  }
  const listed = await t.api.execute<{ stdout: string }>(sessionId, { command: 'ls' });
  expect(listed.body.stdout.split('\n').filter(Boolean).sort()).toEqual(
    ran.map((i) => `f${i}.txt`).sort(),
  );
});

it("counts the refusals on the agent's /metrics", async () => {
  const address = t.stack.agent.metricsAddress;
  const text = await (
    await fetch(`http://${address}/metrics`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    })
  ).text();
  for (const name of ['agent_cold_starts_refused_total', 'agent_run_starts_refused_total']) {
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    expect([name, Number(line?.split(' ')[1])]).toEqual([name, expect.any(Number)]);
    expect(Number(line?.split(' ')[1])).toBeGreaterThanOrEqual(1);
  }
});
