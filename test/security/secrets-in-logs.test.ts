import { Writable } from 'node:stream';
import { createLogger } from '@sandbox/logger';
import { call, createAccount } from '../support/api';
import { startStack, type TestStack } from '../support/stack';
import { startWebhookReceiver } from '../support/webhook-receiver';

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
    gatewayEnv: { WEBHOOK_POLL_INTERVAL_MS: '100', WEBHOOK_RETRY_SCHEDULE_S: '1' },
  });
});

afterAll(async () => {
  await stack?.stop();
});

it('logs neither keys, tokens, env values, file contents nor webhook secrets', async () => {
  const account = await createAccount(stack, 'paid');
  // Webhook deliveries, one failing (its error is logged), sign with the secret.
  const receiver = await startWebhookReceiver((n) => (n === 0 ? 500 : 200));
  const hook = await call<{ secret: string }>(`${stack.url}/v1/webhooks`, {
    method: 'POST',
    key: account.key,
    body: { url: receiver.url, events: ['execution.completed'] },
  });
  const webhookSecret = hook.body.secret;
  expect(webhookSecret).toMatch(/^whsec_/);
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

  await receiver.waitFor((got) => got.length >= 2);
  await receiver.close();

  const logs = lines.join('');
  expect(logs).toContain('webhook delivery failed');
  expect(logs.length).toBeGreaterThan(1000); // the requests above were logged
  for (const secret of [
    account.key,
    stack.adminToken,
    envSecret,
    fileSecret,
    'wrong-admin-token',
    webhookSecret,
    webhookSecret.slice('whsec_'.length),
    stack.gatewayConfig.secretsKey?.toString('base64') ?? 'no key',
  ]) {
    expect(logs).not.toContain(secret);
  }
});
