import type { TestAccount } from '../support/api';
import type { ApiClient } from '../support/api-client';
import { previewRequest, startPreviewApp } from '../support/preview-app';
import { useStackWithStranger } from '../support/use-stack';

/**
 * Private previews' tokens, now shown again in the session's info (ADR 41), against another
 * account and against reuse: only the session's own account reads a token; another account's
 * key gets 404 and never the token (info, list); a session's token opens no other session's
 * preview (same account or another), and neither does the sealed value kept in the database.
 */
const t = useStackWithStranger({ edge: true });

interface Created {
  sessionId: string;
  previewToken: string;
}

async function privateSession(client: ApiClient, account: TestAccount): Promise<Created> {
  const created = await client.post<Created>('/v1/sessions/create', { preview: { private: true } });
  expect(created.status).toBe(200);
  await startPreviewApp(t.stack.url, account.key, created.body.sessionId, [3000]);
  return created.body;
}

const preview = async (sessionId: string, token?: string) =>
  (
    await previewRequest(
      t.stack.edge?.url ?? '',
      `${sessionId.replace('_', '-')}.preview.test`,
      '/',
      token === undefined ? {} : { 'x-preview-token': token },
    )
  ).status;

it("never shows a session's token to another account", async () => {
  const a = await privateSession(t.mine, t.owner);
  expect((await t.mine.session(a.sessionId)).body).toMatchObject({ previewToken: a.previewToken });

  const info = await t.theirs.session(a.sessionId);
  expect(info.status).toBe(404);
  expect(info.text).not.toContain(a.previewToken);
  const list = await t.theirs.get('/v1/sessions?limit=100');
  expect(list.text).not.toContain(a.sessionId);
  expect(list.text).not.toContain(a.previewToken);
  // Nor does the owner's list carry it: only the one session's info.
  expect((await t.mine.get('/v1/sessions?limit=100')).text).not.toContain(a.previewToken);
});

it("opens only its own session's preview, and the sealed value opens none", async () => {
  const a = await privateSession(t.mine, t.owner);
  const b = await privateSession(t.mine, t.owner);
  const c = await privateSession(t.theirs, t.stranger);
  expect(await preview(a.sessionId, a.previewToken)).toBe(200);
  expect(await preview(b.sessionId, a.previewToken)).toBe(403);
  expect(await preview(c.sessionId, a.previewToken)).toBe(403);
  expect(await preview(a.sessionId, c.previewToken)).toBe(403);

  const { rows } = await t.stack.gateways[0]!.db.query<{ sealed: string }>(
    'SELECT preview_token_sealed AS sealed FROM sessions WHERE id = $1',
    [a.sessionId],
  );
  expect(rows[0]?.sealed).toMatch(/^v1\./);
  expect(await preview(a.sessionId, rows[0]!.sealed)).toBe(403);
});

it('forks: another account gets 404 and no fork; each fork has a token of its own', async () => {
  const a = await privateSession(t.mine, t.owner);
  const listed = async () => (await t.theirs.get<{ data: unknown[] }>('/v1/sessions')).body.data;
  const before = (await listed()).length;
  const refused = await t.theirs.post(`/v1/sessions/${a.sessionId}/fork`, { count: 2 });
  expect(refused.status).toBe(404);
  expect(refused.body).toMatchObject({ error: { code: 'session_not_found' } });
  expect((await listed()).length).toBe(before);

  const forked = await t.mine.post<{ sessions: Created[] }>(`/v1/sessions/${a.sessionId}/fork`, {});
  expect(forked.status).toBe(201);
  const [copy] = forked.body.sessions;
  expect(copy?.previewToken).toEqual(expect.any(String));
  expect(copy?.previewToken).not.toBe(a.previewToken);
  const fork = copy as Created;
  await startPreviewApp(t.stack.url, t.owner.key, fork.sessionId, [3000]);
  expect(await preview(fork.sessionId, fork.previewToken)).toBe(200);
  expect(await preview(fork.sessionId, a.previewToken)).toBe(403);
  expect(await preview(a.sessionId, fork.previewToken)).toBe(403);
});
