import { randomBytes } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname, networkInterfaces } from 'node:os';
import { startGateway, type RunningGateway } from '@sandbox/gateway';
import { ApiClient } from '../support/api-client';
import { useStackWithAccount } from '../support/use-stack';

/**
 * Issue 40: a webhook must not make the gateway call its own host. The stack's gateway runs
 * as in production, without WEBHOOK_ALLOW_PRIVATE_URLS. These tests send traffic only to
 * loopback and this host's own addresses; the documentation-range literals are refused before
 * any connection is made.
 */
const t = useStackWithAccount('free', {
  session: true,
  stack: {
    gatewayEnv: {
      WEBHOOK_ALLOW_PRIVATE_URLS: 'false',
      WEBHOOK_POLL_INTERVAL_MS: '100',
      WEBHOOK_RETRY_SCHEDULE_S: '1',
    },
  },
});

interface ErrorBody {
  error: { code: string; message: string; details?: Record<string, unknown> };
}

interface WebhookView {
  id: string;
  url: string;
  events: string[];
  createdAt: string;
  disabled: boolean;
  disabledReason?: string;
}

const interfaces = Object.values(networkInterfaces()).flatMap((entries) => entries ?? []);
/** This host's own IPv4 address on an interface other than loopback, if it has one. */
const ownIPv4 = interfaces.find(
  (entry) => entry.family === 'IPv4' && !entry.internal && !entry.address.startsWith('127.'),
)?.address;
const withOwnIPv4 = ownIPv4 === undefined ? it.skip : it;
if (ownIPv4 === undefined) {
  console.error(
    'webhook-ssrf: this host has no IPv4 address but loopback: own-address cases skipped',
  );
}
const OWN_REASON = "(this host's own address)";

/** A real HTTP server on `host` that records every request it receives. */
async function listenOn(host: string): Promise<{ url: string; received: string[] }> {
  const received: string[] = [];
  const server = createServer((req, res) => {
    received.push(`${req.method ?? ''} ${req.url ?? ''}`);
    res.writeHead(200).end();
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  t.beforeStop(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://${host}:${(server.address() as AddressInfo).port}/hooks`, received };
}

let listener: { url: string; received: string[] } | undefined;
beforeAll(async () => {
  if (ownIPv4 !== undefined) listener = await listenOn(ownIPv4);
});

const register = (url: string, events = ['execution.completed']) =>
  t.api.post<ErrorBody>('/v1/webhooks', { url, events });

withOwnIPv4("refuses a webhook to this host's own address, where a server listens", async () => {
  const receiver = listener as NonNullable<typeof listener>;
  const refused = await register(receiver.url);
  expect(refused.status).toBe(400);
  expect(refused.body).toMatchObject({
    error: { code: 'invalid_request', details: { field: 'url' } },
  });
  expect(refused.body.error.message).toContain(`${ownIPv4} is not a public address ${OWN_REASON}`);
  expect((await t.api.get<{ data: WebhookView[] }>('/v1/webhooks')).body.data).toEqual([]);
  expect(receiver.received).toEqual([]);
});

it.each(['192.0.2.1', '198.51.100.1', '203.0.113.1'])(
  'refuses a webhook to the documentation address %s',
  async (address) => {
    const refused = await register(`http://${address}:8080/hooks`);
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('invalid_request');
    // This host may have one of them as its own (a test VM's network).
    expect(refused.body.error.message).toContain(`${address} is not a public address (`);
    expect(refused.body.error.message).toMatch(/\((documentation|this host's own address)\)$/);
  },
);

it("refuses a webhook to this host's name, which resolves to loopback or its own address", async () => {
  const name = hostname().toLowerCase();
  const resolved = await lookup(name, { all: true }).catch(() => []);
  const own = new Set(interfaces.map((entry) => entry.address));
  const local = (address: string) =>
    address.startsWith('127.') || address === '::1' || own.has(address);
  if (resolved.length === 0 || !resolved.every(({ address }) => local(address))) {
    console.error(`webhook-ssrf: skipped: ${name} does not resolve to this host here`);
    return;
  }
  const refused = await register(`http://${name}:8080/hooks`);
  expect(refused.status).toBe(400);
  expect(refused.body.error.code).toBe('invalid_request');
  expect(refused.body.error.message).toContain(name);
  expect(refused.body.error.message).toMatch(/is not a public address \(/);
});

withOwnIPv4(
  'disables, when a gateway starts, an endpoint registered before to its own address',
  async () => {
    const receiver = listener as NonNullable<typeof listener>;
    const db = t.stack.gateways[0]!.db;
    // A signing secret sealed by the gateway, from an endpoint that never receives anything.
    const donor = await t.api.post<WebhookView>('/v1/webhooks', {
      url: 'https://93.184.216.34/never',
      events: ['session.lost'],
    });
    expect(donor.status).toBe(201);
    const { rows } = await db.query<{ secret_encrypted: string }>(
      'SELECT secret_encrypted FROM webhook_endpoints WHERE id = $1',
      [donor.body.id],
    );
    expect((await t.api.delete(`/v1/webhooks/${donor.body.id}`)).status).toBe(200);
    // As registration accepted it before the change (migration 0005's columns).
    const id = `wh_${randomBytes(12).toString('hex')}`;
    await db.query(
      `INSERT INTO webhook_endpoints (id, account_id, url, events, secret_encrypted)
       VALUES ($1, $2, $3, $4, $5)`,
      [id, t.account.accountId, receiver.url, ['execution.completed'], rows[0]?.secret_encrypted],
    );

    const restarted: RunningGateway = await startGateway({
      config: t.stack.gatewayConfig,
      logger: t.stack.logger,
      schema: t.stack.schema,
    });
    t.beforeStop(() => restarted.stop());
    const api = new ApiClient(restarted, t.account.key);
    const listed = async () =>
      (await api.get<{ data: WebhookView[] }>('/v1/webhooks')).body.data.find((w) => w.id === id);
    const deadline = Date.now() + 10_000;
    while (!(await listed())?.disabled) {
      if (Date.now() > deadline) throw new Error('the endpoint was never disabled');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await listed()).toEqual({
      id,
      url: receiver.url,
      events: ['execution.completed'],
      createdAt: expect.any(String),
      disabled: true,
      disabledReason: `url refused: ${ownIPv4} is not a public address ${OWN_REASON}`,
    });

    // A run that would have been delivered to it queues nothing, and nothing arrives.
    const run = await t.api.execute(t.sessionId, { command: 'echo hi' });
    expect(run.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const deliveries = await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1',
      [id],
    );
    expect(deliveries.rows[0]?.n).toBe(0);
    expect(receiver.received).toEqual([]);
  },
);
