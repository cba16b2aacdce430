import { call, createAccount } from '../api';
import { openApiHelpers, type OpenApiContext } from './context';

function createSession(t: OpenApiContext): void {
  const { expectDocumented, post, slowly } = openApiHelpers(t);
  it('createSession', async () => {
    const { stack, account, noAgent } = t;
    const ok = await post('/sessions/create', account.key, { metadata: { a: 1 } });
    expect([ok.status, ok.text]).toEqual([200, expect.any(String)]);
    expectDocumented('post', '/sessions/create', ok);
    t.sessionId = (ok.body as { sessionId: string }).sessionId;
    expectDocumented(
      'post',
      '/sessions/create',
      await post('/sessions/create', account.key, { ttl: -1 }),
    );
    expectDocumented('post', '/sessions/create', await post('/sessions/create', undefined, {}));
    expectDocumented(
      'post',
      '/sessions/create',
      await post('/sessions/create', account.key, { resourceLimits: { memory: 512 } }),
    );
    expectDocumented(
      'post',
      '/sessions/create',
      await post('/sessions/create', account.key, { metadata: { blob: 'x'.repeat(1_200_000) } }),
    );
    const full = await createAccount(stack, 'enterprise', { limits: { maxConcurrentSessions: 0 } });
    expectDocumented('post', '/sessions/create', await post('/sessions/create', full.key, {}));
    expectDocumented(
      'post',
      '/sessions/create',
      await slowly(() => post('/sessions/create', account.key, {})),
    );
    expectDocumented(
      'post',
      '/sessions/create',
      await post('/sessions/create', account.key, {}, noAgent.url),
    );
  });
}

function listSessions(t: OpenApiContext): void {
  const { expectDocumented, v1 } = openApiHelpers(t);
  it('listSessions', async () => {
    const { stack, account } = t;
    expectDocumented('get', '/sessions', await call(v1('/sessions'), { key: account.key }));
    expectDocumented('get', '/sessions', await call(v1('/sessions?limit=0'), { key: account.key }));
    expectDocumented('get', '/sessions', await call(v1('/sessions')));
    const executeOnly = await createAccount(stack, 'free', { scopes: ['execute'] });
    expectDocumented('get', '/sessions', await call(v1('/sessions'), { key: executeOnly.key }));
  });
}

function getSession(t: OpenApiContext): void {
  const { expectDocumented, v1, slowly } = openApiHelpers(t);
  it('getSession', async () => {
    const { stack, account, sessionId, noAgent } = t;
    const path = '/sessions/{sessionId}';
    expectDocumented('get', path, await call(v1(`/sessions/${sessionId}`), { key: account.key }));
    expectDocumented(
      'get',
      path,
      await call(v1(`/sessions/ses_${'1'.repeat(24)}`), { key: account.key }),
    );
    expectDocumented('get', path, await call(v1(`/sessions/${sessionId}`)));
    const executeOnly = await createAccount(stack, 'free', { scopes: ['execute'] });
    expectDocumented(
      'get',
      path,
      await call(v1(`/sessions/${sessionId}`), { key: executeOnly.key }),
    );
    expectDocumented(
      'get',
      path,
      await slowly(() => call(v1(`/sessions/${sessionId}`), { key: account.key })),
    );
    expectDocumented(
      'get',
      path,
      await call(`${noAgent.url}/v1/sessions/${sessionId}`, { key: account.key }),
    );
  });
}

function forkSession(t: OpenApiContext): void {
  const { expectDocumented, v1, post, slowly } = openApiHelpers(t);
  it('forkSession', async () => {
    const { stack, noAgent, poolFull } = t;
    const path = '/sessions/{sessionId}/fork';
    // An account of its own: the free one's requests a minute are for the other cases.
    const forker = await createAccount(stack, 'paid');
    await poolFull();
    const source = (await post('/sessions/create', forker.key, {})).body as { sessionId: string };
    const fork = (body: unknown, key?: string, id = source.sessionId, url = stack.url) =>
      post(`/sessions/${id}/fork`, key, body, url);
    const ok = await fork({ processes: false }, forker.key);
    expectDocumented('post', path, ok);
    for (const made of (ok.body as { sessions: { sessionId: string }[] }).sessions) {
      await call(v1(`/sessions/${made.sessionId}`), { method: 'DELETE', key: forker.key });
    }
    expectDocumented('post', path, await fork({ count: 11 }, forker.key));
    expectDocumented('post', path, await fork({}));
    const executeOnly = await createAccount(stack, 'free', { scopes: ['execute'] });
    expectDocumented('post', path, await fork({}, executeOnly.key));
    expectDocumented('post', path, await fork({}, forker.key, `ses_${'1'.repeat(24)}`));
    expectDocumented('post', path, await fork({ blob: 'x'.repeat(1_200_000) }, forker.key));
    const one = await createAccount(stack, 'enterprise', { limits: { maxConcurrentSessions: 1 } });
    await poolFull();
    const only = (await post('/sessions/create', one.key, {})).body as { sessionId: string };
    expectDocumented('post', path, await fork({}, one.key, only.sessionId));
    expectDocumented('post', path, await slowly(() => fork({}, forker.key)));
    expectDocumented('post', path, await fork({}, forker.key, source.sessionId, noAgent.url));
  });
}

function egress(t: OpenApiContext): void {
  const { expectDocumented, v1, slowly } = openApiHelpers(t);
  it('getEgress and setEgress', async () => {
    const { stack, account, sessionId, noAgent } = t;
    const path = '/sessions/{sessionId}/egress';
    const at = (id: string) => v1(`/sessions/${id}/egress`);
    const put = (body: unknown, key?: string, url = at(sessionId)) =>
      call(url, { method: 'PUT', ...(key ? { key } : {}), body });
    const executeOnly = await createAccount(stack, 'free', { scopes: ['execute'] });
    const missing = `ses_${'1'.repeat(24)}`;
    expectDocumented('put', path, await put({ deny: ['203.0.113.0/24'] }, account.key));
    expectDocumented('put', path, await put({ allow: ['not a rule'] }, account.key));
    expectDocumented('put', path, await put({}));
    expectDocumented('put', path, await put({}, executeOnly.key));
    expectDocumented('put', path, await put({}, account.key, at(missing)));
    expectDocumented('put', path, await slowly(() => put({}, account.key)));
    expectDocumented(
      'put',
      path,
      await put({}, account.key, `${noAgent.url}/v1/sessions/${sessionId}/egress`),
    );
    expectDocumented('get', path, await call(at(sessionId), { key: account.key }));
    expectDocumented('get', path, await call(at(sessionId)));
    expectDocumented('get', path, await call(at(sessionId), { key: executeOnly.key }));
    expectDocumented('get', path, await call(at(missing), { key: account.key }));
  });
}

function deleteSession(t: OpenApiContext): void {
  const { expectDocumented, v1 } = openApiHelpers(t);
  it('deleteSession', async () => {
    const { stack, account, sessionId } = t;
    const path = '/sessions/{sessionId}';
    const del = (key?: string) =>
      call(v1(`/sessions/${sessionId}`), { method: 'DELETE', ...(key ? { key } : {}) });
    expectDocumented('delete', path, await del());
    const readOnly = await createAccount(stack, 'free', { scopes: ['execute'] });
    expectDocumented('delete', path, await del(readOnly.key));
    expectDocumented('delete', path, await del(account.key));
    expectDocumented('delete', path, await del(account.key));
  });
}

/** Sessions: create, list, get, fork, egress (the shared session is made here). */
export const sessionCases: ((t: OpenApiContext) => void)[] = [
  createSession,
  listSessions,
  getSession,
  forkSession,
  egress,
];

/** deleteSession, once the other cases are done with the shared session. */
export const deleteSessionCases: ((t: OpenApiContext) => void)[] = [deleteSession];
