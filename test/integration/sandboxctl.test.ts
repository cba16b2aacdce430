import { runCli } from '@sandbox/sandboxctl';
import { call } from '../support/api';
import { startStack, type TestStack } from '../support/stack';

let stack: TestStack;

beforeAll(async () => {
  stack = await startStack();
});

afterAll(async () => {
  await stack?.stop();
});

async function sandboxctl(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(
    argv,
    { adminUrl: stack.url, adminToken: stack.adminToken },
    { out: (t) => (out += t), err: (t) => (err += t) },
  );
  return { code, out, err };
}

describe('sandboxctl against the admin API', () => {
  it('creates an account and a key that works, lists it without its value, and revokes it', async () => {
    const account = await sandboxctl('accounts', 'create', '--name', 'acme', '--plan', 'paid');
    expect(account.code).toBe(0);
    const { id, plan } = JSON.parse(account.out) as { id: string; plan: string };
    expect(plan).toBe('paid');

    const created = await sandboxctl('keys', 'create', '--account', id, '--name', 'ci');
    expect(created.code).toBe(0);
    const key = JSON.parse(created.out) as { id: string; key: string };
    expect(key.key).toMatch(/^sk_live_/);
    const ok = await call(`${stack.url}/v1/sessions`, { key: key.key });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-ratelimit-limit')).toBe('1000');

    const listed = await sandboxctl('keys', 'list', '--account', id);
    expect(listed.out).not.toContain(key.key);
    expect(JSON.parse(listed.out)).toMatchObject({
      data: [{ id: key.id, name: 'ci', revokedAt: null }],
    });

    expect((await sandboxctl('keys', 'revoke', key.id)).code).toBe(0);
    expect((await call(`${stack.url}/v1/sessions`, { key: key.key })).status).toBe(401);
    const after = JSON.parse((await sandboxctl('keys', 'list', '--account', id)).out) as {
      data: { revokedAt: string | null; lastUsedAt: string | null }[];
    };
    expect(after.data[0]?.revokedAt).not.toBeNull();
    expect(after.data[0]?.lastUsedAt).not.toBeNull();
  });

  it('creates enterprise accounts with custom limits, and refuses them on other plans', async () => {
    const limits = JSON.stringify({ requestsPerMinute: 5000, maxConcurrentSessions: 500 });
    const enterprise = await sandboxctl(
      'accounts',
      'create',
      '--name',
      'big',
      '--plan',
      'enterprise',
      '--limits',
      limits,
    );
    expect(enterprise.code).toBe(0);
    const { id } = JSON.parse(enterprise.out) as { id: string };
    const key = JSON.parse((await sandboxctl('keys', 'create', '--account', id)).out) as {
      key: string;
    };
    const response = await call(`${stack.url}/v1/sessions`, { key: key.key });
    expect(response.headers.get('x-ratelimit-limit')).toBe('5000');

    const refused = await sandboxctl(
      'accounts',
      'create',
      '--name',
      'x',
      '--plan',
      'free',
      '--limits',
      limits,
    );
    expect(refused.code).toBe(1);
    expect(refused.err).toContain('invalid_request');
  });
});

describe('sandboxctl: plans and errors', () => {
  it('moves an account between plans, and its existing keys follow at once', async () => {
    const created = await sandboxctl('accounts', 'create', '--name', 'grows', '--plan', 'free');
    const { id } = JSON.parse(created.out) as { id: string };
    expect(JSON.parse(created.out)).toMatchObject({
      limits: { requestsPerMinute: 100, maxConcurrentSessions: 10, maxSessionTtlS: 86_400 },
    });
    const key = (
      JSON.parse((await sandboxctl('keys', 'create', '--account', id)).out) as {
        key: string;
      }
    ).key;
    const limitOf = async () =>
      (await call(`${stack.url}/v1/sessions`, { key })).headers.get('x-ratelimit-limit');
    expect(await limitOf()).toBe('100');

    const paid = await sandboxctl('accounts', 'update', id, '--plan', 'paid');
    expect(paid.code).toBe(0);
    expect(JSON.parse(paid.out)).toMatchObject({ plan: 'paid', limits: { maxMemoryMb: 4096 } });
    expect(await limitOf()).toBe('1000');

    const custom = JSON.stringify({ requestsPerMinute: 7000 });
    const refused = await sandboxctl('accounts', 'update', id, '--limits', custom);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain('invalid_request');

    const big = await sandboxctl(
      'accounts',
      'update',
      id,
      '--plan',
      'enterprise',
      '--limits',
      custom,
    );
    expect(JSON.parse(big.out)).toMatchObject({
      plan: 'enterprise',
      planOverrides: { requestsPerMinute: 7000 },
      limits: { requestsPerMinute: 7000 },
    });
    expect(await limitOf()).toBe('7000');

    const back = await sandboxctl('accounts', 'update', id, '--plan', 'free', '--name', 'small');
    expect(JSON.parse(back.out)).toMatchObject({ name: 'small', plan: 'free', planOverrides: {} });
    expect(await limitOf()).toBe('100');
    const got = JSON.parse((await sandboxctl('accounts', 'get', id)).out) as { limits: unknown };
    expect(got.limits).toMatchObject({ requestsPerMinute: 100, resourceOverrides: false });
  });

  it('fails clearly on a wrong token, an unknown plan or an unknown command', async () => {
    let err = '';
    const code = await runCli(
      ['accounts', 'list'],
      { adminUrl: stack.url, adminToken: 'wrong' },
      { out: () => undefined, err: (t) => (err += t) },
    );
    expect(code).toBe(1);
    expect(err).toContain('unauthorized');
    expect((await sandboxctl('accounts', 'create', '--name', 'x', '--plan', 'gold')).code).toBe(1);
    expect((await sandboxctl('frobnicate')).code).toBe(1);
  });
});
