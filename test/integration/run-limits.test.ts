import { call, createAccount, createSession } from '../support/api';
import { startStack, type TestStack } from '../support/stack';

/**
 * Runs under way at once in one session are limited (SANDBOX_MAX_RUNS); past the limit an
 * execute gets 429 with the limit and Retry-After, and nothing starts.
 */
let stack: TestStack;

beforeAll(async () => {
  stack = await startStack({ agentEnv: { SANDBOX_MAX_RUNS: '2' } });
});

afterAll(async () => {
  await stack?.stop();
});

it("refuses a session's run past its limit of runs at once, and takes runs again once one ended", async () => {
  const account = await createAccount(stack, 'paid');
  const sessionId = await createSession(stack.url, account.key);
  const execute = (command: string) =>
    call<{ exitCode: number; stdout: string }>(`${stack.url}/v1/execute`, {
      method: 'POST',
      key: account.key,
      body: { sessionId, command },
    });
  const long = [execute('sleep 2; echo one'), execute('sleep 2; echo two')];
  await new Promise((resolve) => setTimeout(resolve, 500));

  const refused = await execute('echo three > three.txt');
  expect(refused.status).toBe(429);
  expect(refused.headers.get('retry-after')).toBe('1');
  expect(refused.body).toMatchObject({
    error: { code: 'rate_limit_exceeded', details: { limit: 2, scope: 'session_runs' } },
  });
  // Another session of the same account has runs of its own.
  const other = await createSession(stack.url, account.key);
  const elsewhere = await call<{ stdout: string }>(`${stack.url}/v1/execute`, {
    method: 'POST',
    key: account.key,
    body: { sessionId: other, command: 'echo elsewhere' },
  });
  expect(elsewhere.body.stdout).toBe('elsewhere\n');

  const ended = await Promise.all(long);
  expect(ended.map((r) => r.body.stdout)).toEqual(['one\n', 'two\n']);
  const after = await execute('ls; echo four');
  expect(after.body.stdout).toBe('four\n'); // the refused run never wrote three.txt
});
