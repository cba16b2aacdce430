import { call, createAccount } from '../support/api';
import { sessionContainers } from '../support/stack';
import { useStack } from '../support/use-stack';

const t = useStack({ replicas: 2 });

const create = (url: string, key: string, idempotencyKey: string, body: unknown = {}) =>
  call(`${url}/v1/sessions/create`, {
    method: 'POST',
    key,
    body,
    headers: { 'idempotency-key': idempotencyKey },
  });

/** Session containers on the stack's node (the file's tests run one after another). */
async function sessionCount(): Promise<number> {
  return (await sessionContainers(t.stack.nodeId)).length;
}

/**
 * Waits for the session's sandbox to be whole: a create from the warm pool is answered before
 * its container takes the session's name, and a session's first request waits for that.
 */
async function settled(key: string, response: { body: unknown }): Promise<void> {
  const { sessionId } = response.body as { sessionId: string };
  const run = await call(`${t.stack.url}/v1/execute`, {
    method: 'POST',
    key,
    body: { sessionId, command: 'true' },
  });
  expect(run.status).toBe(200);
}

describe('Idempotency-Key on session creation', () => {
  it('replays the original response byte for byte, on either replica', async () => {
    const account = await createAccount(t.stack, 'free');
    const before = await sessionCount();
    const first = await create(t.stack.urls[0]!, account.key, 'retry-1', { metadata: { a: 1 } });
    expect(first.status).toBe(200);
    const again = await create(t.stack.urls[1]!, account.key, 'retry-1', { metadata: { a: 1 } });
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    await settled(account.key, first);
    expect(await sessionCount()).toBe(before + 1);
  });

  it('keeps stored responses sealed: a private preview token is replayed, never stored in clear', async () => {
    const account = await createAccount(t.stack, 'free');
    const body = { preview: { private: true } };
    const first = await create(t.stack.urls[0]!, account.key, 'private-1', body);
    expect(first.status).toBe(200);
    const token = (first.body as { previewToken: string }).previewToken;
    expect(token).toMatch(/^pvt_/);
    const again = await create(t.stack.urls[1]!, account.key, 'private-1', body);
    expect(again.text).toBe(first.text);
    await settled(account.key, first);
    const { rows } = await t.stack.gateways[0]!.db.query<{ response_body: string }>(
      `SELECT response_body FROM idempotency_keys WHERE idempotency_key = 'private-1'`,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.response_body).not.toContain(token);
    expect(rows[0]!.response_body).toMatch(/^v1\./);
  });

  it('creates exactly one session for 20 concurrent requests with one key', async () => {
    const account = await createAccount(t.stack, 'free');
    const before = await sessionCount();
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => create(t.stack.urls[i % 2]!, account.key, 'burst')),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(new Set(responses.map((r) => r.text)).size).toBe(1);
    const list = await call<{ data: unknown[] }>(`${t.stack.url}/v1/sessions`, {
      key: account.key,
    });
    expect(list.body.data).toHaveLength(1);
    await settled(account.key, responses[0]!);
    expect(await sessionCount()).toBe(before + 1);
  });

  it('refuses a key reused with a different body, and keeps keys per account', async () => {
    const account = await createAccount(t.stack, 'free');
    await create(t.stack.url, account.key, 'k', { ttl: 100 });
    const other = await create(t.stack.url, account.key, 'k', { ttl: 200 });
    expect(other.status).toBe(400);
    expect(other.body).toMatchObject({
      error: { code: 'invalid_request', details: { field: 'Idempotency-Key' } },
    });
    const stranger = await createAccount(t.stack, 'free');
    const theirs = await create(t.stack.url, stranger.key, 'k', { ttl: 200 });
    expect(theirs.status).toBe(200);
  });

  it('stores no failure: a retry after a rejected request runs again', async () => {
    const account = await createAccount(t.stack, 'free');
    const bad = await create(t.stack.url, account.key, 'fix-me', { ttl: 10_000_000 });
    expect(bad.status).toBe(400);
    // The same body is still refused on its merits, not replayed from storage...
    expect((await create(t.stack.url, account.key, 'fix-me', { ttl: 10_000_000 })).status).toBe(
      400,
    );
    // ...and the key is free for the corrected request.
    const fixed = await create(t.stack.url, account.key, 'fix-me', { ttl: 60 });
    expect(fixed.status).toBe(200);
  });

  it('rejects malformed keys', async () => {
    const account = await createAccount(t.stack, 'free');
    const response = await create(t.stack.url, account.key, 'x'.repeat(256));
    expect(response.status).toBe(400);
  });
});
