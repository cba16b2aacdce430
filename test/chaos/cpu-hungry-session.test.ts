import { parseEvents, type RunEvent } from '../support/streamed-run';
import { useStackWithAccount } from '../support/use-stack';

/**
 * A session that saturates its own CPU (0.25 by default) still gets its runs' final events and
 * timeouts: the runner works outside the session's CPU group (ADR 20). Issue 16 found 20 such
 * streams cut short, a missed timeout, a restarted runner and processes left stopped.
 */
const t = useStackWithAccount('paid');

/** A streamed run's events, in order, once its stream has closed. */
async function streamed(sessionId: string, body: Record<string, unknown>): Promise<RunEvent[]> {
  const response = await t.api.executeStream(sessionId, body);
  expect(response.status).toBe(200);
  return parseEvents(await response.text());
}

/** The session's processes as `ps` sees them: state and command. */
async function processes(sessionId: string): Promise<string[]> {
  const listed = await t.api.execute<{ stdout: string }>(sessionId, {
    command: 'ps -eo stat=,args=',
  });
  return listed.body.stdout.trim().split('\n');
}

it('ends each of 20 streams of 300 KB at once at 0.25 CPU with its result, and leaves nothing stopped', async () => {
  const sessionId = await t.api.createSession();
  const code = "for (let i = 0; i < 20000; i++) console.log('line-' + i)";
  const runs = await Promise.all(
    Array.from({ length: 20 }, () => streamed(sessionId, { command: `node -e "${code}"` })),
  );
  for (const events of runs) {
    const last = events.at(-1);
    expect(last?.event).toBe('result');
    const result = last?.data as { exitCode: number; timedOut: boolean; stdout: string };
    if (result.timedOut) {
      expect(result.exitCode).toBe(124); // a clean timeout is allowed; a cut is not
    } else {
      expect(result.exitCode).toBe(0);
      const streamedLines = events
        .filter((e) => e.event === 'stdout')
        .map((e) => e.data.data as string)
        .join('')
        .split('\n');
      expect(streamedLines).toHaveLength(20001);
      expect(streamedLines[19999]).toBe('line-19999');
    }
  }
  const info = await t.api.session<{ activeProcesses: number }>(sessionId);
  expect(info.body.activeProcesses).toBe(0);
  expect((await processes(sessionId)).filter((p) => p.startsWith('T'))).toEqual([]);
});

it('times a run out within a second of its timeout while background loops eat the session CPU', async () => {
  const sessionId = await t.api.createSession();
  const hog = await t.api.execute(sessionId, {
    command: 'for i in 1 2 3 4; do nohup sh -c "while :; do :; done" >/dev/null 2>&1 & done',
  });
  expect(hog.status).toBe(200);
  const started = Date.now();
  const events = await streamed(sessionId, {
    command: 'echo started; while :; do :; done',
    timeout: 2,
  });
  const elapsed = Date.now() - started;
  expect(events.at(-1)).toMatchObject({ event: 'result', data: { timedOut: true, exitCode: 124 } });
  // Every streamed run says `started` (its pid) first, then its output.
  expect(events[0]).toMatchObject({ event: 'started', data: { type: 'started' } });
  expect(events[1]).toMatchObject({ event: 'stdout', data: { data: 'started\n' } });
  expect(elapsed).toBeLessThan(3000);
  // The loops are the session's own: still running, never stopped, and a kill-all ends them.
  const left = await processes(sessionId);
  expect(left.filter((p) => p.includes('while :'))).toHaveLength(4);
  expect(left.filter((p) => p.startsWith('T'))).toEqual([]);
  const killed = await t.api.kill<{ killed: number }>(sessionId);
  expect(killed.body.killed).toBeGreaterThanOrEqual(4);
  expect((await processes(sessionId)).filter((p) => p.includes('while :'))).toEqual([]);
});
