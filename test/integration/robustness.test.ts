import { gzipSync } from 'node:zlib';
import { call, createAccount } from '../support/api';
import { useStackWithAccount } from '../support/use-stack';

/** Hostile or odd input: always a 4xx in the spec's error shape, never a 500. */

const t = useStackWithAccount('paid', { session: true });

/** A session creation whose body is sent as written, with `key`. */
const create = (rawBody: string, headers: Record<string, string> = {}, key = t.account.key) =>
  call(`${t.stack.url}/v1/sessions/create`, {
    method: 'POST',
    key,
    rawBody,
    headers: { 'content-type': 'application/json', ...headers },
  });

describe('metadata Postgres cannot store', () => {
  it.each([
    ['a NUL in a value', '{"metadata":{"esc":"\\u0000"}}'],
    ['a NUL in a key', '{"metadata":{"a\\u0000b":1}}'],
    ['a lone surrogate', '{"metadata":{"s":"\\ud800"}}'],
  ])('refuses %s with 400', async (_what, body) => {
    const response = await create(body);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({
      error: { code: 'invalid_request', details: { field: 'metadata' } },
    });
  });

  it('refuses absurd nesting with 400', async () => {
    const response = await create(`{"metadata":{"a":${'['.repeat(50_000)}${']'.repeat(50_000)}}}`);
    expect(response.status).toBe(400);
  });
});

describe('metadata comes back as sent', () => {
  it('keeps __proto__ keys and key order', async () => {
    const sent = '{"z":1,"a":{"y":2,"b":[3]},"__proto__":{"polluted":true}}';
    const created = await create(`{"metadata":${sent}}`);
    const id = (created.body as { sessionId: string }).sessionId;
    const info = await t.api.session(id);
    expect(JSON.stringify((info.body as { metadata: unknown }).metadata)).toBe(sent);
  });
});

describe('ids and URLs that name no session', () => {
  it.each(['%00', `${'x'}%00`, '%ZZ', '%C0%AF', 'create'])(
    'GET and DELETE /v1/sessions/%s answer 4xx',
    async (id) => {
      for (const method of ['GET', 'DELETE']) {
        const response = await call(`${t.stack.url}/v1/sessions/${id}`, {
          method,
          key: t.account.key,
        });
        expect(response.status).toBeGreaterThanOrEqual(400);
        expect(response.status).toBeLessThan(500);
        expect(response.body).toMatchObject({ error: { code: expect.any(String) as string } });
      }
    },
  );

  it('answers 404 to an execute whose sessionId holds a NUL', async () => {
    const response = await t.api.execute('ses_\u0000', { command: 'echo' });
    expect(response.status).toBe(404);
  });
});

describe('bodies', () => {
  it('refuses compressed bodies instead of inflating them', async () => {
    for (const encoding of ['gzip', 'deflate', 'br']) {
      const response = await create('{"ttl":120}', { 'content-encoding': encoding });
      expect(response.status).toBe(400);
    }
    const real = await fetch(`${t.stack.url}/v1/sessions/create`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${t.account.key}`,
        'content-type': 'application/json',
        'content-encoding': 'gzip',
      },
      body: gzipSync(Buffer.from('{"ttl":120}')),
    });
    expect(real.status).toBe(400);
  });

  it('authenticates before reading the body', async () => {
    const response = await call(`${t.stack.url}/v1/sessions/create`, {
      method: 'POST',
      rawBody: '{bad',
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(401);
  });

  it('rate-limits before reading the body', async () => {
    const limited = await createAccount(t.stack, 'enterprise', {
      limits: { requestsPerMinute: 1 },
    });
    await t.as(limited.key).get('/v1/sessions');
    const response = await create('{bad', {}, limited.key);
    expect(response.status).toBe(429);
  });

  it('gives field, value and max for a ttl of the wrong type', async () => {
    for (const ttl of [1.5, '100', true]) {
      const response = await create(JSON.stringify({ ttl }));
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({
        error: { details: { field: 'ttl', value: ttl, max: 604_800 } },
      });
    }
  });

  it('accepts only plain decimal pagination', async () => {
    for (const limit of ['0x10', '1e1', '-1', ' 5']) {
      const response = await t.api.get(`/v1/sessions?limit=${encodeURIComponent(limit)}`);
      expect(response.status).toBe(400);
    }
  });
});

describe('execute edge cases', () => {
  it('creates a missing working directory', async () => {
    const response = await t.api.execute(t.sessionId, { command: 'pwd', workingDir: 'new/dir' });
    expect(response.body).toMatchObject({ stdout: '/workspace/new/dir\n', exitCode: 0 });
  });

  it('survives a broken PATH with an ordinary failed run', async () => {
    const response = await t.api.execute(t.sessionId, {
      command: 'ls',
      env: { PATH: '/nonexistent' },
    });
    expect(response.status).toBe(200);
    expect(response.body.exitCode).not.toBe(0);
    expect(response.body.stdout).not.toContain('OCI runtime');
  });
});

describe('request ids', () => {
  it('echoes any printable request id', async () => {
    const response = await t.api.get('/v1/sessions', {
      'x-request-id': 'my request id with spaces',
    });
    expect(response.headers.get('x-request-id')).toBe('my request id with spaces');
  });
});
