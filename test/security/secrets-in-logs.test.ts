import { Writable } from 'node:stream';
import { createLogger } from '@sandbox/logger';
import { call, createAccount } from '../support/api';
import { startStack, type TestStack } from '../support/stack';

/** Secrets a caller sends never reach a log line, whatever happens to the request. */

const lines: string[] = [];
let stack: TestStack;

beforeAll(async () => {
  const capture = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  stack = await startStack({
    logger: createLogger({ name: 'test', level: 'trace', destination: capture }),
  });
});

afterAll(async () => {
  await stack?.stop();
});

it('logs neither keys, tokens, env values nor file contents', async () => {
  const account = await createAccount(stack, 'paid');
  const envSecret = 'env-secret-4f1c2a9e';
  const fileSecret = 'file-secret-8d7b6c5a';
  const created = await call<{ sessionId: string }>(`${stack.url}/v1/sessions/create`, {
    method: 'POST',
    key: account.key,
    body: {},
  });
  const sessionId = created.body.sessionId;
  await call(`${stack.url}/v1/execute`, {
    method: 'POST',
    key: account.key,
    body: {
      sessionId,
      command: 'echo "$SECRET" >&2; exit 3',
      env: { SECRET: envSecret },
      files: [{ path: 'secret.txt', content: fileSecret }],
    },
  });
  await call(`${stack.url}/v1/files/write`, {
    method: 'POST',
    key: account.key,
    body: { sessionId, path: 'again.txt', content: fileSecret },
  });
  // Failures log their causes: make some.
  await call(`${stack.url}/v1/execute`, {
    method: 'POST',
    key: account.key,
    body: { sessionId: 'ses_missing', command: 'x', env: { SECRET: envSecret } },
  });
  await call(`${stack.url}/v1/sessions`, { key: `${account.key}x` });
  await call(`${stack.url}/admin/v1/accounts`, { key: 'wrong-admin-token' });

  const logs = lines.join('');
  expect(logs.length).toBeGreaterThan(1000); // the requests above were logged
  for (const secret of [
    account.key,
    stack.adminToken,
    envSecret,
    fileSecret,
    'wrong-admin-token',
  ]) {
    expect(logs).not.toContain(secret);
  }
});
