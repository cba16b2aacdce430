import { call, createAccount, type ApiResponse } from '../api';
import { upgrade } from '../openapi-conformance';
import { openApiHelpers, type OpenApiContext } from './context';

function terminals(t: OpenApiContext): void {
  const { expectDocumented, v1, post } = openApiHelpers(t);
  it('createTerminal and its WebSocket', async () => {
    const { stack, account, sessionId, noAgent, doc, documented } = t;
    const path = '/sessions/{sessionId}/terminals';
    const make = (key: string | undefined, body: unknown, session = sessionId) =>
      post(`/sessions/${session}/terminals`, key, body);
    const made = await make(account.key, { cols: 90, rows: 20 });
    expectDocumented('post', path, made);
    expectDocumented('post', path, await make(account.key, { shell: 'bash' }));
    expectDocumented('post', path, await make(undefined, {}));
    const filesOnly = await createAccount(stack, 'free', { scopes: ['files'] });
    expectDocumented('post', path, await make(filesOnly.key, {}));
    expectDocumented('post', path, await make(account.key, {}, `ses_${'6'.repeat(24)}`));
    expectDocumented(
      'post',
      path,
      await make(account.key, { env: { BIG: 'x'.repeat(1_100_000) } }),
    );

    const connect = '/sessions/{sessionId}/terminals/{terminalId}/connect';
    const terminal = made.body as { path: string; token: string };
    const socket = (base: string, query = '', headers: Record<string, string> = {}) =>
      upgrade(`${base.replace('http', 'ws')}/v1${terminal.path}${query}`, headers);
    // A plain request, a forged token, a key without the scope, another terminal.
    expectDocumented('get', connect, await call(v1(terminal.path), { key: account.key }));
    expectDocumented('get', connect, await socket(stack.url, '?token=tty_forged'));
    const auth = (key: string) => ({ authorization: `Bearer ${key}` });
    expectDocumented('get', connect, await socket(stack.url, '', auth(filesOnly.key)));
    const otherPath = terminal.path.replace(/term_\w+/, `term_${'0'.repeat(24)}`);
    expectDocumented(
      'get',
      connect,
      await upgrade(`${stack.url.replace('http', 'ws')}/v1${otherPath}`, auth(account.key)),
    );
    // The node out of reach (a gateway that knows no node of the session).
    const second = (await make(account.key, {})).body as { path: string; token: string };
    const unavailable = await upgrade(
      `${noAgent.url.replace('http', 'ws')}/v1${second.path}?token=${second.token}`,
    );
    expectDocumented('get', connect, unavailable);
    // And open.
    const opened = await socket(stack.url, `?token=${terminal.token}`);
    expect(opened.status).toBe(101);
    expect(opened.headers.get('x-request-id')).not.toBeNull();
    expect(doc.paths[connect]?.get?.responses['101']).toBeDefined();
    documented.saw('get', connect, 101);
  });
}

function codeContexts(t: OpenApiContext): void {
  const { expectDocumented, v1, post } = openApiHelpers(t);
  it('code contexts: create, list, delete, restart, and a cell', async () => {
    const { stack } = t;
    const base = '/sessions/{sessionId}/contexts';
    const one = `${base}/{contextId}`;
    const restart = `${one}/restart`;
    const at = (id?: string) => `/sessions/${id ?? session}/contexts`;
    const remove = (path: string, key?: string) =>
      call(v1(path), { method: 'DELETE', ...(key ? { key } : {}) });
    // An account of its own: its requests do not count against the others' rate limit.
    const owner = await createAccount(stack, 'paid');
    const created = await post('/sessions/create', owner.key, {});
    const session = (created.body as { sessionId: string }).sessionId;
    const sessionsOnly = await createAccount(stack, 'free', { scopes: ['sessions'] });
    const unknownSession = `ses_${'7'.repeat(24)}`;
    const unknownContext = `ctx_${'0'.repeat(24)}`;

    const made = await post(at(), owner.key, { language: 'javascript' });
    expectDocumented('post', base, made);
    const { contextId } = made.body as { contextId: string };
    expectDocumented('post', base, await post(at(), owner.key, { cwd: '/etc' }));
    expectDocumented('post', base, await post(at(), owner.key, { language: 'cobol' }));
    expectDocumented('post', base, await post(at(), undefined, {}));
    expectDocumented('post', base, await post(at(), sessionsOnly.key, {}));
    expectDocumented('post', base, await post(at(unknownSession), owner.key, {}));

    expectDocumented('get', base, await call(v1(at()), { key: owner.key }));
    expectDocumented('get', base, await call(v1(at())));
    expectDocumented('get', base, await call(v1(at()), { key: sessionsOnly.key }));
    expectDocumented('get', base, await call(v1(at(unknownSession)), { key: owner.key }));

    const cell = await post('/execute', owner.key, {
      sessionId: session,
      contextId,
      code: 'process.exit(1)',
    });
    expectDocumented('post', '/execute', cell);
    expect(cell.status).toBe(409);

    const ctx = `${at()}/${contextId}`;
    expectDocumented('post', restart, await post(`${ctx}/restart`, owner.key, undefined));
    expectDocumented('post', restart, await post(`${ctx}/restart`, undefined, undefined));
    expectDocumented('post', restart, await post(`${ctx}/restart`, sessionsOnly.key, undefined));
    expectDocumented(
      'post',
      restart,
      await post(`${at()}/${unknownContext}/restart`, owner.key, undefined),
    );

    expectDocumented('delete', one, await remove(ctx));
    expectDocumented('delete', one, await remove(ctx, sessionsOnly.key));
    expectDocumented('delete', one, await remove(ctx, owner.key));
    expectDocumented('delete', one, await remove(ctx, owner.key));

    let refused: ApiResponse<unknown> | undefined;
    for (let i = 0; i < 9 && refused === undefined; i++) {
      const answer = await post(at(), owner.key, {});
      if (answer.status === 429) refused = answer;
    }
    expect(refused?.status).toBe(429);
    if (refused !== undefined) expectDocumented('post', base, refused);
  });
}

function snapshots(t: OpenApiContext): void {
  const { expectDocumented, v1, post } = openApiHelpers(t);
  it('snapshots: create, list, get, delete, and a create from one', async () => {
    const { stack, noAgent } = t;
    const base = '/sessions/{sessionId}/snapshots';
    const one = '/snapshots/{snapshotId}';
    // An account of its own, one snapshot at the most.
    const owner = await createAccount(stack, 'enterprise', { limits: { maxSnapshots: 1 } });
    const executeOnly = await createAccount(stack, 'free', { scopes: ['execute'] });
    const created = await post('/sessions/create', owner.key, {});
    const session = (created.body as { sessionId: string }).sessionId;
    const at = (id = session) => `/sessions/${id}/snapshots`;

    const taken = await post(at(), owner.key, { name: 'base' });
    expect(taken.status).toBe(201);
    expectDocumented('post', base, taken);
    const { snapshotId } = taken.body as { snapshotId: string };
    expectDocumented('post', base, await post(at(), owner.key, {}));
    expectDocumented('post', base, await post(at(), owner.key, { name: '' }));
    expectDocumented('post', base, await post(at(), undefined, {}));
    expectDocumented('post', base, await post(at(), executeOnly.key, {}));
    expectDocumented('post', base, await post(at(`ses_${'7'.repeat(24)}`), owner.key, {}));
    expectDocumented('post', base, await post(at(), owner.key, {}, noAgent.url));

    const list = (query = '', key?: string) =>
      call(v1(`/snapshots${query}`), { ...(key ? { key } : {}) });
    expectDocumented('get', '/snapshots', await list('', owner.key));
    expectDocumented('get', '/snapshots', await list('?limit=0', owner.key));
    expectDocumented('get', '/snapshots', await list());
    expectDocumented('get', '/snapshots', await list('', executeOnly.key));

    const path = `/snapshots/${snapshotId}`;
    expectDocumented('get', one, await call(v1(path), { key: owner.key }));
    expectDocumented('get', one, await call(v1(path)));
    expectDocumented('get', one, await call(v1(path), { key: executeOnly.key }));
    // Another account's (its own, so as not to spend the shared account's rate limit): 404.
    const stranger = await createAccount(stack, 'paid');
    expectDocumented('get', one, await call(v1(path), { key: stranger.key }));

    const copy = await post('/sessions/create', owner.key, { snapshotId });
    expect(copy.status).toBe(200);
    expectDocumented('post', '/sessions/create', copy);
    const del = (key?: string) => call(v1(path), { method: 'DELETE', ...(key ? { key } : {}) });
    expectDocumented('delete', one, await del());
    expectDocumented('delete', one, await del(executeOnly.key));
    expectDocumented('delete', one, await del(owner.key));
    expectDocumented('delete', one, await del(owner.key));
    const gone = await post('/sessions/create', owner.key, { snapshotId });
    expect(gone.status).toBe(404);
    expectDocumented('post', '/sessions/create', gone);
  });
}

function webhooks(t: OpenApiContext): void {
  const { expectDocumented, v1, post } = openApiHelpers(t);
  it('createWebhook, listWebhooks and deleteWebhook', async () => {
    const { stack, account, noAgent } = t;
    const hooks = '/webhooks';
    const body = { url: 'http://127.0.0.1:9/hook', events: ['execution.completed'] };
    const created = await post(hooks, account.key, body);
    expectDocumented('post', hooks, created);
    expectDocumented('post', hooks, await post(hooks, account.key, { ...body, events: ['x'] }));
    expectDocumented('post', hooks, await post(hooks, undefined, body));
    const sessionsOnly = await createAccount(stack, 'free', { scopes: ['sessions'] });
    expectDocumented('post', hooks, await post(hooks, sessionsOnly.key, body));
    expectDocumented(
      'post',
      hooks,
      await post(hooks, account.key, {
        ...body,
        url: `https://x.example/${'a'.repeat(1_100_000)}`,
      }),
    );
    // A gateway without SECRETS_KEY cannot seal secrets: 503.
    const publicUrl = { ...body, url: 'https://hooks.example.com/x' };
    expectDocumented('post', hooks, await post(hooks, account.key, publicUrl, noAgent.url));

    expectDocumented('get', hooks, await call(v1(hooks), { key: account.key }));
    expectDocumented('get', hooks, await call(v1(hooks)));
    expectDocumented('get', hooks, await call(v1(hooks), { key: sessionsOnly.key }));

    const one = '/webhooks/{webhookId}';
    const del = (key?: string) =>
      call(v1(`/webhooks/${String(created.body.id)}`), {
        method: 'DELETE',
        ...(key ? { key } : {}),
      });
    expectDocumented('delete', one, await del());
    expectDocumented('delete', one, await del(sessionsOnly.key));
    expectDocumented('delete', one, await del(account.key));
    expectDocumented('delete', one, await del(account.key));
  });
}

/** A session's terminals, code contexts and snapshots. */
export const resourceCases: ((t: OpenApiContext) => void)[] = [terminals, codeContexts, snapshots];

/** Webhooks: create, list, delete. */
export const webhookCases: ((t: OpenApiContext) => void)[] = [webhooks];
