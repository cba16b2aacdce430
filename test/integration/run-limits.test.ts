import { useStackWithAccount } from '../support/use-stack';

/**
 * Runs under way at once in one session are limited (SANDBOX_MAX_RUNS); past the limit an
 * execute gets 429 with the limit and Retry-After, and nothing starts.
 */
const t = useStackWithAccount('paid', { stack: { agentEnv: { SANDBOX_MAX_RUNS: '2' } } });

it("refuses a session's run past its limit of runs at once, and takes runs again once one ended", async () => {
  const sessionId = await t.api.createSession();
  const execute = (command: string) =>
    t.api.execute<{ exitCode: number; stdout: string }>(sessionId, { command });
  const long = [execute('sleep 2; echo one'), execute('sleep 2; echo two')];
  await new Promise((resolve) => setTimeout(resolve, 500));

  const refused = await execute('echo three > three.txt');
  expect(refused.status).toBe(429);
  expect(refused.headers.get('retry-after')).toBe('1');
  expect(refused.body).toMatchObject({
    error: { code: 'rate_limit_exceeded', details: { limit: 2, scope: 'session_runs' } },
  });
  // Another session of the same account has runs of its own.
  const other = await t.api.createSession();
  const elsewhere = await t.api.execute<{ stdout: string }>(other, { command: 'echo elsewhere' });
  expect(elsewhere.body.stdout).toBe('elsewhere\n');

  const ended = await Promise.all(long);
  expect(ended.map((r) => r.body.stdout)).toEqual(['one\n', 'two\n']);
  const after = await execute('ls; echo four');
  expect(after.body.stdout).toBe('four\n'); // the refused run never wrote three.txt
});
