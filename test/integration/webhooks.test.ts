import { randomBytes } from 'node:crypto';
import { startGateway } from '@sandbox/gateway';
import { createAccount, createSession, type TestAccount } from '../support/api';
import { useStackWithAccount } from '../support/use-stack';
import {
  startWebhookReceiver,
  verifySignature,
  type ReceivedWebhook,
  type WebhookReceiver,
} from '../support/webhook-receiver';

const t = useStackWithAccount('free', {
  stack: {
    gatewayEnv: {
      WEBHOOK_POLL_INTERVAL_MS: '100',
      WEBHOOK_TIMEOUT_MS: '1000',
      WEBHOOK_RETRY_SCHEDULE_S: '1,1',
      WEBHOOK_DISABLE_AFTER_S: '3',
      SESSION_SWEEP_INTERVAL_S: '1',
    },
  },
});
const receivers: WebhookReceiver[] = [];
t.beforeStop(async () => {
  for (const receiver of receivers) await receiver.close();
});

async function receiver(answer?: Parameters<typeof startWebhookReceiver>[0]) {
  const started = await startWebhookReceiver(answer);
  receivers.push(started);
  return started;
}

/** Runs `command` in `sessionId` as `owner`. */
const execute = (owner: TestAccount, sessionId: string, command: string) =>
  t.as(owner.key).execute(sessionId, { command });

async function register(
  owner: TestAccount,
  url: string,
  events: string[],
): Promise<{ id: string; secret: string }> {
  const created = await t.as(owner.key).post<{ id: string; secret: string }>('/v1/webhooks', {
    url,
    events,
  });
  expect(created.status).toBe(201);
  return created.body;
}

const payloadOf = (received: ReceivedWebhook) =>
  JSON.parse(received.body) as { type: string; timestamp: string; data: Record<string, unknown> };

describe('webhook endpoints', () => {
  it('registers, lists without the secret, and deletes; the secret is stored sealed', async () => {
    const owner = t.as((await createAccount(t.stack)).key);
    const created = await owner.post('/v1/webhooks', {
      url: 'http://127.0.0.1:9/x',
      events: ['session.expired', 'session.expired'],
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^wh_[a-z0-9]{24}$/),
      url: 'http://127.0.0.1:9/x',
      events: ['session.expired'],
      createdAt: expect.any(String),
      disabled: false,
      secret: expect.stringMatching(/^whsec_/),
    });
    const { rows } = await t.stack.gateways[0]!.db.query<{ secret_encrypted: string }>(
      'SELECT secret_encrypted FROM webhook_endpoints WHERE id = $1',
      [created.body.id],
    );
    const secret = String(created.body.secret);
    expect(rows[0]?.secret_encrypted).toMatch(/^v1\./);
    expect(rows[0]?.secret_encrypted).not.toContain(secret.slice('whsec_'.length));

    const listed = await owner.get<{ data: unknown[] }>('/v1/webhooks');
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([
      {
        id: created.body.id,
        url: 'http://127.0.0.1:9/x',
        events: ['session.expired'],
        createdAt: created.body.createdAt,
        disabled: false,
      },
    ]);

    // Another account sees nothing and cannot delete it.
    const other = t.as((await createAccount(t.stack)).key);
    expect((await other.get<{ data: unknown[] }>('/v1/webhooks')).body.data).toEqual([]);
    const foreign = await other.delete(`/v1/webhooks/${String(created.body.id)}`);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ error: { code: 'not_found' } });

    const deleted = await owner.delete(`/v1/webhooks/${String(created.body.id)}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ deleted: true, webhookId: created.body.id });
    const again = await owner.delete(`/v1/webhooks/${String(created.body.id)}`);
    expect(again.status).toBe(404);
  });

  it.each([
    [{ url: 'ftp://example.com', events: ['session.expired'] }, 'url'],
    [{ url: 'https://example.com', events: ['session.created'] }, 'events.0'],
    [{ url: 'https://example.com', events: [] }, 'events'],
    [{ url: 'https://example.com' }, 'events'],
    [{ url: 42, events: ['session.expired'] }, 'url'],
    [{ url: 'https://example.com', events: ['session.expired'], extra: 1 }, ''],
  ])('refuses %j with invalid_request', async (body, field) => {
    const refused = await t.api.post('/v1/webhooks', body);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: { code: 'invalid_request' } });
    if (field !== '') expect(refused.body).toMatchObject({ error: { details: { field } } });
  });

  it('needs the webhooks scope', async () => {
    const limited = await createAccount(t.stack, 'free', { scopes: ['sessions'] });
    const refused = await t.as(limited.key).get('/v1/webhooks');
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error: { code: 'forbidden' } });
  });
});

describe('webhook delivery', () => {
  it('sends execution.completed, signed, to the subscribed endpoints of the account only', async () => {
    const owner = await createAccount(t.stack);
    const hooks = await receiver();
    const { secret } = await register(owner, hooks.url, ['execution.completed']);
    const bystander = await createAccount(t.stack);
    const elsewhere = await receiver();
    await register(bystander, elsewhere.url, ['execution.completed', 'session.expired']);
    const uninterested = await receiver();
    await register(owner, uninterested.url, ['session.expired']);

    const sessionId = await createSession(t.stack.url, owner.key);
    const run = await execute(owner, sessionId, 'echo hi; exit 3');
    expect(run.status).toBe(200);
    await hooks.waitFor((got) => got.length === 1);
    const [delivery] = hooks.received as [ReceivedWebhook];
    expect(verifySignature(secret, delivery)).toBe(true);
    expect(delivery.headers['content-type']).toBe('application/json');
    expect(delivery.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(payloadOf(delivery)).toEqual({
      type: 'execution.completed',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      data: {
        sessionId,
        exitCode: 3,
        timedOut: false,
        executionTime: run.body.executionTime,
        memoryUsed: run.body.memoryUsed,
        cpuTime: run.body.cpuTime,
      },
    });
    // Nothing for the other account, nor for the endpoint not subscribed to the event.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(elsewhere.received).toHaveLength(0);
    expect(uninterested.received).toHaveLength(0);
  });

  it('retries a failing endpoint with the same id and body, then marks it failed', async () => {
    const owner = await createAccount(t.stack);
    const flaky = await receiver((n) => (n < 2 ? 500 : 200));
    const { secret } = await register(owner, flaky.url, ['execution.completed']);
    const down = await receiver(() => 503);
    await register(owner, down.url, ['execution.completed']);
    const sessionId = await createSession(t.stack.url, owner.key);
    await execute(owner, sessionId, 'true');
    await flaky.waitFor((got) => got.length === 3);
    const [first, second, third] = flaky.received as [
      ReceivedWebhook,
      ReceivedWebhook,
      ReceivedWebhook,
    ];
    expect(new Set(flaky.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
    expect(second.body).toBe(first.body);
    expect(third.body).toBe(first.body);
    expect(flaky.received.every((r) => verifySignature(secret, r))).toBe(true);
    // Retries wait their back-off (1 s here).
    expect(second.receivedAt - first.receivedAt).toBeGreaterThanOrEqual(900);

    // The endpoint that always fails: the first attempt and two retries, then no more.
    await down.waitFor((got) => got.length === 3);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(down.received).toHaveLength(3);
    const { rows } = await t.stack.gateways[0]!.db.query<{
      status: string;
      attempts: number;
      last_error: string;
    }>(
      `SELECT d.status, d.attempts, d.last_error FROM webhook_deliveries d
         JOIN webhook_endpoints e ON e.id = d.endpoint_id WHERE e.url = $1`,
      [down.url],
    );
    expect(rows).toEqual([{ status: 'failed', attempts: 3, last_error: 'HTTP 503' }]);
  });
});

describe('webhook delivery under hanging and failing receivers', () => {
  it("keeps delivering to other accounts while one account's receivers hang", async () => {
    const noisy = await createAccount(t.stack);
    const hanging = await receiver(() => 'hang');
    for (let i = 0; i < 5; i += 1) {
      await register(noisy, `${hanging.url}?n=${i}`, ['execution.completed']);
    }
    const noisySession = await createSession(t.stack.url, noisy.key);
    for (let i = 0; i < 8; i += 1) {
      await execute(noisy, noisySession, 'true');
    }
    await hanging.waitFor((got) => got.length >= 4);

    const quiet = await createAccount(t.stack);
    const hooks = await receiver();
    await register(quiet, hooks.url, ['execution.completed']);
    const quietSession = await createSession(t.stack.url, quiet.key);
    await execute(quiet, quietSession, 'true');
    const ran = Date.now();
    await hooks.waitFor((got) => got.length === 1);
    // 40 deliveries of the noisy account, each hanging for the 1 s timeout, wait their turn.
    expect(hooks.received[0]!.receivedAt - ran).toBeLessThan(800);
    // Retries go on (and are disabled after 3 s of failures here), never more than 4 at once.
    await hanging.waitFor((got) => got.length >= 8);
    expect(hanging.maxOpen).toBeLessThanOrEqual(4);
  });

  it('disables an endpoint that fails for too long, and queues nothing more for it', async () => {
    const owner = await createAccount(t.stack);
    const broken = await receiver(() => 500);
    const { id } = await register(owner, broken.url, ['execution.completed']);
    const sessionId = await createSession(t.stack.url, owner.key);
    const run = () => execute(owner, sessionId, 'true');
    await run();
    const listed = async () =>
      (
        await t.as(owner.key).get<{ data: { id: string; disabled: boolean }[] }>('/v1/webhooks')
      ).body.data.find((hook) => hook.id === id);
    const deadline = Date.now() + 15_000;
    while (!(await listed())?.disabled) {
      if (Date.now() > deadline) throw new Error('the endpoint was never disabled');
      await run();
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    const seen = broken.received.length;
    await run();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(broken.received.length).toBe(seen);
    const { rows } = await t.stack.gateways[0]!.db.query<{ status: string }>(
      `SELECT DISTINCT status FROM webhook_deliveries WHERE endpoint_id = $1`,
      [id],
    );
    expect(rows).toEqual([{ status: 'failed' }]);
  });
});

describe('webhook delivery of session.expired', () => {
  it('sends session.expired when a session reaches its ttl', async () => {
    const owner = await createAccount(t.stack);
    const hooks = await receiver();
    const { secret } = await register(owner, hooks.url, ['session.expired']);
    const sessionId = await createSession(t.stack.url, owner.key, { ttl: 1, metadata: { job: 7 } });
    await hooks.waitFor((got) => got.length === 1);
    const [delivery] = hooks.received as [ReceivedWebhook];
    expect(verifySignature(secret, delivery)).toBe(true);
    const payload = payloadOf(delivery);
    expect(payload).toEqual({
      type: 'session.expired',
      timestamp: expect.any(String),
      data: {
        sessionId,
        createdAt: expect.any(String),
        expiresAt: expect.any(String),
        metadata: { job: 7 },
      },
    });
    const data = payload.data as { createdAt: string; expiresAt: string };
    expect(Date.parse(data.expiresAt) - Date.parse(data.createdAt)).toBe(1000);
    const gone = await t.as(owner.key).session(sessionId);
    expect(gone.status).toBe(404);
  });
});

describe('webhook delivery across gateway restarts and key rotation', () => {
  it('delivers after a gateway restart in the middle of a delivery', async () => {
    const owner = await createAccount(t.stack);
    // The first request is never answered: the gateway stops while it is in flight.
    const hooks = await receiver((n) => (n === 0 ? 'hang' : 200));
    const { secret } = await register(owner, hooks.url, ['execution.completed']);
    const sessionId = await createSession(t.stack.url, owner.key);
    await execute(owner, sessionId, 'echo restart');
    await hooks.waitFor((got) => got.length === 1);
    const [first] = t.stack.gateways.splice(0, 1);
    await first!.stop();

    const restarted = await startGateway({
      config: t.stack.gatewayConfig,
      logger: t.stack.logger,
      schema: t.stack.schema,
    });
    t.stack.gateways.unshift(restarted);
    t.stack.url = restarted.url;
    await hooks.waitFor((got) => got.length === 2);
    const [hung, delivered] = hooks.received as [ReceivedWebhook, ReceivedWebhook];
    expect(delivered.headers['webhook-id']).toBe(hung.headers['webhook-id']);
    expect(delivered.body).toBe(hung.body);
    expect(verifySignature(secret, delivered)).toBe(true);
    // The receiver has answered; the gateway records the answer right after (bounded wait).
    const status = async () =>
      (
        await restarted.db.query<{ status: string }>(
          `SELECT status FROM webhook_deliveries WHERE event_id = $1`,
          [delivered.headers['webhook-id']],
        )
      ).rows;
    const deadline = Date.now() + 5000;
    while ((await status())[0]?.status === 'pending' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await status()).toEqual([{ status: 'delivered' }]);
  });

  it('rotates SECRETS_KEY: secrets are sealed again at start and deliveries still verify', async () => {
    const owner = await createAccount(t.stack);
    const hooks = await receiver();
    const { id, secret } = await register(owner, hooks.url, ['execution.completed']);
    const sealedUnder = async () =>
      (
        await t.stack.gateways[0]!.db.query<{ secret_encrypted: string }>(
          'SELECT secret_encrypted FROM webhook_endpoints WHERE id = $1',
          [id],
        )
      ).rows[0]!.secret_encrypted.split('.')[1];
    const before = await sealedUnder();

    const oldKey = t.stack.gatewayConfig.secretsKey!;
    const newKey = randomBytes(32);
    const [first] = t.stack.gateways.splice(0, 1);
    await first!.stop();
    const rotated = await startGateway({
      config: { ...t.stack.gatewayConfig, secretsKey: newKey, secretsPreviousKeys: [oldKey] },
      logger: t.stack.logger,
      schema: t.stack.schema,
    });
    t.stack.gateways.unshift(rotated);
    t.stack.url = rotated.url;
    expect(await sealedUnder()).not.toBe(before);

    const sessionId = await createSession(t.stack.url, owner.key);
    await execute(owner, sessionId, 'true');
    await hooks.waitFor((got) => got.length === 1);
    expect(verifySignature(secret, hooks.received[0]!)).toBe(true);

    // A key dropped too early loses those secrets, but does not stop a gateway from starting.
    const lost = await startGateway({
      config: { ...t.stack.gatewayConfig, secretsKey: randomBytes(32), secretsPreviousKeys: [] },
      logger: t.stack.logger,
      schema: t.stack.schema,
    });
    await lost.stop();
    await rotated.db.query('DELETE FROM webhook_endpoints WHERE id = $1', [id]);
  });
});
