import { call, createAccount } from '../support/api';
import { startStack, type TestStack } from '../support/stack';

let stack: TestStack;

beforeAll(async () => {
  stack = await startStack();
});

afterAll(async () => {
  await stack?.stop();
});

it('a slow stream reader slows the process instead of filling gateway or agent memory', async () => {
  const account = await createAccount(stack, 'paid');
  const created = await call<{ sessionId: string }>(`${stack.url}/v1/sessions/create`, {
    method: 'POST',
    key: account.key,
    body: { resourceLimits: { cpu: 2 } },
  });
  const sessionId = created.body.sessionId;
  const controller = new AbortController();
  // The gateway and the agent run in this process: its memory is theirs.
  const rssBefore = process.memoryUsage().rss;
  const response = await fetch(`${stack.url}/v1/execute`, {
    method: 'POST',
    headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      sessionId,
      command: 'head -c 1500000000 /dev/zero | tr "\\0" x',
      stream: true,
      timeout: 120,
    }),
    signal: controller.signal,
  });
  expect(response.status).toBe(200);
  // Read nothing for a while. Unthrottled, 1.5 GB would be produced in a couple of seconds.
  await new Promise((resolve) => setTimeout(resolve, 5000));
  const growth = process.memoryUsage().rss - rssBefore;
  const check = await call(`${stack.url}/v1/execute`, {
    method: 'POST',
    key: account.key,
    body: { sessionId, command: 'pgrep -x head >/dev/null && echo still-writing || echo done' },
  });
  expect(check.body.stdout).toBe('still-writing\n');
  expect(growth).toBeLessThan(200 * 1024 * 1024);

  // Reading resumes the flow.
  const reader = response.body!.getReader();
  let received = 0;
  while (received < 50 * 1024 * 1024) {
    const { value, done } = await reader.read();
    if (done) break;
    received += value.length;
  }
  expect(received).toBeGreaterThanOrEqual(50 * 1024 * 1024);
  controller.abort();
});

it('a slow reader of a large file holds the read in the sandbox instead of filling memory', async () => {
  const account = await createAccount(stack, 'paid');
  const created = await call<{ sessionId: string }>(`${stack.url}/v1/sessions/create`, {
    method: 'POST',
    key: account.key,
    body: {},
  });
  const sessionId = created.body.sessionId;
  const size = 250 * 1024 * 1024;
  const made = await call(`${stack.url}/v1/execute`, {
    method: 'POST',
    key: account.key,
    body: { sessionId, command: `head -c ${size} /dev/urandom > big.bin && echo made` },
  });
  expect(made.body.stdout).toBe('made\n');
  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  const controller = new AbortController();
  const response = await fetch(`${stack.url}/v1/files/read?sessionId=${sessionId}&path=big.bin`, {
    headers: { authorization: `Bearer ${account.key}` },
    signal: controller.signal,
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-length')).toBe(String(size));
  // Read nothing for a while: the file must not pile up in the gateway or the agent.
  await new Promise((resolve) => setTimeout(resolve, 4000));
  expect(process.memoryUsage().rss - rssBefore).toBeLessThan(120 * 1024 * 1024);

  // Reading takes every byte, in order.
  const reader = response.body!.getReader();
  let received = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    received += value.length;
  }
  expect(received).toBe(size);
});
