import type { RunningGateway } from '@sandbox/gateway';
import { call, createAccount, type ApiResponse, type TestAccount } from '../support/api';
import {
  DocumentedResponses,
  everyOperation,
  upgrade,
  type OpenApiDoc,
} from '../support/openapi-conformance';
import { slowRuntime } from '../support/slow-runtime';
import { startCutOffGateway, startStack, type TestStack } from '../support/stack';

/**
 * Every route and every documented response, checked against the served OpenAPI document: each
 * response's body must match the documented schema for its status, and every documented
 * (operation, status) pair must be produced by some request here.
 */

let stack: TestStack;
/** The real Docker runtime, made slow on demand: an agent whose host is overloaded. */
const { slowness, runtime, poolFull } = slowRuntime();
let noAgent: RunningGateway;
/** A gateway whose Redis is out of reach. */
let noRedis: RunningGateway;
let documented: DocumentedResponses;
let doc: OpenApiDoc;
let account: TestAccount;

/** Asserts `response` is documented for `method path` and matches its schema. */
const expectDocumented = (method: string, path: string, response: ApiResponse<unknown>) =>
  documented.check(method, path, response);

/**
 * The session-operation timeout here, short so that the 408s are quick to provoke, and the
 * node's delay that provokes them. At 1 s, an egress PUT on a machine busy with other suites
 * took longer than the timeout: the 200 it is documented with went unseen (a flaky CI run).
 */
const OP_TIMEOUT_MS = 3000;
const SLOWER_THAN_TIMEOUT_MS = OP_TIMEOUT_MS + 1500;

beforeAll(async () => {
  stack = await startStack({
    gatewayEnv: {
      SESSION_OP_TIMEOUT_MS: String(OP_TIMEOUT_MS),
      BODY_LIMIT_MB: '1',
      PROCESS_STDIN_WAIT_MS: '500',
    },
    runtime,
  });
  noAgent = await startCutOffGateway(stack, { redis: true });
  noRedis = await startCutOffGateway(stack, { redis: false });
  const served = await call<OpenApiDoc>(`${stack.url}/v1/openapi.json`);
  expect(served.status).toBe(200);
  documented = new DocumentedResponses(served.body);
  doc = served.body;
  account = await createAccount(stack, 'free');
  // Operations time out after 3 s here: the first create must not be a cold one.
  await poolFull();
});

afterAll(async () => {
  await noAgent?.stop();
  await noRedis?.stop();
  await stack?.stop();
});

const v1 = (path: string) => `${stack.url}/v1${path}`;

const post = (path: string, key: string | undefined, body: unknown, url = stack.url) =>
  call(`${url}/v1${path}`, { method: 'POST', ...(key ? { key } : {}), body });

describe('the OpenAPI document', () => {
  it('is OpenAPI 3.1 and every schema in it compiles', () => {
    expect(doc.openapi).toBe('3.1.0');
    documented.compileAll();
  });

  it('lists exactly the routes that exist', async () => {
    for (const [path, methods] of Object.entries(doc.paths)) {
      if (path === '/openapi.json') continue;
      for (const method of Object.keys(methods)) {
        const concrete = path.replace('{sessionId}', `ses_${'0'.repeat(24)}`);
        const response = await call(v1(concrete), { method: method.toUpperCase() });
        expect([method, path, response.status]).toEqual([method, path, 401]);
      }
    }
    const undocumented = await call(v1('/sessions/create'), { method: 'PUT', key: account.key });
    expect(undocumented.status).toBe(404);
  });
});

describe('every operation answers as documented', () => {
  let sessionId: string;

  it('createSession', async () => {
    const ok = await post('/sessions/create', account.key, { metadata: { a: 1 } });
    expect([ok.status, ok.text]).toEqual([200, expect.any(String)]);
    expectDocumented('post', '/sessions/create', ok);
    sessionId = (ok.body as { sessionId: string }).sessionId;
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
    slowness.delayMs = SLOWER_THAN_TIMEOUT_MS;
    try {
      expectDocumented('post', '/sessions/create', await post('/sessions/create', account.key, {}));
    } finally {
      slowness.delayMs = 0;
    }
    expectDocumented(
      'post',
      '/sessions/create',
      await post('/sessions/create', account.key, {}, noAgent.url),
    );
  });

  it('listSessions', async () => {
    expectDocumented('get', '/sessions', await call(v1('/sessions'), { key: account.key }));
    expectDocumented('get', '/sessions', await call(v1('/sessions?limit=0'), { key: account.key }));
    expectDocumented('get', '/sessions', await call(v1('/sessions')));
    const executeOnly = await createAccount(stack, 'free', { scopes: ['execute'] });
    expectDocumented('get', '/sessions', await call(v1('/sessions'), { key: executeOnly.key }));
  });

  it('getSession', async () => {
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
    slowness.delayMs = SLOWER_THAN_TIMEOUT_MS;
    try {
      expectDocumented('get', path, await call(v1(`/sessions/${sessionId}`), { key: account.key }));
    } finally {
      slowness.delayMs = 0;
    }
    expectDocumented(
      'get',
      path,
      await call(`${noAgent.url}/v1/sessions/${sessionId}`, { key: account.key }),
    );
  });

  it('forkSession', async () => {
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
    slowness.delayMs = SLOWER_THAN_TIMEOUT_MS;
    try {
      expectDocumented('post', path, await fork({}, forker.key));
    } finally {
      slowness.delayMs = 0;
    }
    expectDocumented('post', path, await fork({}, forker.key, source.sessionId, noAgent.url));
  });

  it('getEgress and setEgress', async () => {
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
    slowness.delayMs = SLOWER_THAN_TIMEOUT_MS;
    try {
      expectDocumented('put', path, await put({}, account.key));
    } finally {
      slowness.delayMs = 0;
    }
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

  it('execute', async () => {
    const ok = await post('/execute', account.key, { sessionId, command: 'echo hi' });
    expectDocumented('post', '/execute', ok);
    expectDocumented('post', '/execute', await post('/execute', account.key, { sessionId }));
    expectDocumented(
      'post',
      '/execute',
      await post('/execute', account.key, { sessionId, command: 'x', workingDir: '/etc' }),
    );
    expectDocumented(
      'post',
      '/execute',
      await post('/execute', account.key, { sessionId: `ses_${'2'.repeat(24)}`, command: 'x' }),
    );
    expectDocumented(
      'post',
      '/execute',
      await post('/execute', account.key, { sessionId, command: 'echo a; sleep 5', timeout: 1 }),
    );
    expectDocumented('post', '/execute', await post('/execute', undefined, { sessionId }));
    expectDocumented(
      'post',
      '/execute',
      await post('/execute', account.key, { sessionId, command: 'x'.repeat(1_200_000) }),
    );
    const sessionsOnly = await createAccount(stack, 'free', { scopes: ['sessions'] });
    expectDocumented(
      'post',
      '/execute',
      await post('/execute', sessionsOnly.key, { sessionId, command: 'x' }),
    );
    expectDocumented(
      'post',
      '/execute',
      await post('/execute', account.key, { sessionId, command: 'true' }, noAgent.url),
    );
  });

  it('killProcesses', async () => {
    const path = '/execution/kill';
    await post('/execute', account.key, {
      sessionId,
      command: 'nohup sleep 300 >/dev/null 2>&1 &',
    });
    expectDocumented('post', path, await post(path, account.key, { sessionId }));
    expectDocumented('post', path, await post(path, account.key, { sessionId, pid: 99_999 }));
    expectDocumented('post', path, await post(path, account.key, { sessionId, pid: 'x' }));
    expectDocumented(
      'post',
      path,
      await post(path, account.key, { sessionId: `ses_${'4'.repeat(24)}` }),
    );
    expectDocumented('post', path, await post(path, undefined, { sessionId }));
    const filesOnly = await createAccount(stack, 'free', { scopes: ['files'] });
    expectDocumented('post', path, await post(path, filesOnly.key, { sessionId }));
  });

  it('execute resumed with Last-Event-ID', async () => {
    const resume = (lastEventId: string) =>
      call(v1('/execute'), {
        method: 'POST',
        key: account.key,
        body: { sessionId, stream: true },
        headers: { 'last-event-id': lastEventId },
      });
    const streamed = await call(v1('/execute'), {
      method: 'POST',
      key: account.key,
      body: { sessionId, command: 'echo hi', stream: true },
    });
    const ids = [...streamed.text.matchAll(/^id: (.*)$/gm)].map((m) => m[1] ?? '');
    expectDocumented('post', '/execute', await resume(ids.at(-1) ?? ''));
    expectDocumented('post', '/execute', await resume(`proc_${'0'.repeat(16)}:0:0`));
    expectDocumented('post', '/execute', await resume('not-an-id'));
  });

  it('processes: list, one, output, stdin', async () => {
    const base = '/sessions/{sessionId}/processes';
    const at = (rest = '', session = sessionId) => `/sessions/${session}/processes${rest}`;
    // null: no key at all (undefined would take the default).
    const get = (path: string, key: string | null = account.key, headers = {}) =>
      call(v1(path), { key: key ?? undefined, headers });
    await post('/execute', account.key, { sessionId, command: 'echo listed' });
    const listed = await get(at());
    expectDocumented('get', base, listed);
    const [first] = (listed.body as { processes: { pid: number; id: string }[] }).processes;
    const other = `ses_${'7'.repeat(24)}`;
    expectDocumented('get', base, await get(at('', other)));
    expectDocumented('get', base, await get(at(), null));
    const filesOnly = await createAccount(stack, 'free', { scopes: ['files'] });
    expectDocumented('get', base, await get(at(), filesOnly.key));
    expectDocumented('get', base, await call(`${noAgent.url}/v1${at()}`, { key: account.key }));

    const one = `${base}/{pid}`;
    expectDocumented('get', one, await get(at(`/${first?.pid}`)));
    expectDocumented('get', one, await get(at(`/${first?.id}`)));
    expectDocumented('get', one, await get(at('/9999999')));
    expectDocumented('get', one, await get(at('/nope')));
    expectDocumented('get', one, await get(at('/1', other)));
    expectDocumented('get', one, await get(at('/1'), null));
    expectDocumented('get', one, await get(at('/1'), filesOnly.key));

    const output = `${one}/output`;
    expectDocumented('get', output, await get(at(`/${first?.pid}/output`)));
    expectDocumented('get', output, await get(at(`/${first?.pid}/output?stdoutOffset=3`)));
    expectDocumented('get', output, await get(at(`/${first?.pid}/output?stdoutOffset=-1`)));
    const events = await get(at(`/${first?.pid}/output`), account.key, {
      accept: 'text/event-stream',
    });
    expect(events.status).toBe(200);
    const endId = [...events.text.matchAll(/^id: (.*)$/gm)].map((m) => m[1] ?? '').at(-1) ?? '';
    expect(endId).toMatch(/:end$/);
    expectDocumented(
      'get',
      output,
      await get(at(`/${first?.pid}/output`), account.key, {
        accept: 'text/event-stream',
        'last-event-id': endId,
      }),
    );
    expectDocumented('get', output, await get(at('/9999999/output')));
    expectDocumented('get', output, await get(at('/1/output', other)));
    expectDocumented('get', output, await get(at('/1/output'), null));
    expectDocumented('get', output, await get(at('/1/output'), filesOnly.key));

    const stdin = `${one}/stdin`;
    const write = (path: string, body: unknown, key: string | null = account.key) =>
      post(path, key ?? undefined, body);
    // A run that reads nothing of its stdin for a while: a write waits, then 408.
    const reading = post('/execute', account.key, {
      sessionId,
      command: 'sleep 2; cat >/dev/null',
      stdin: true,
      timeout: 10,
    });
    let pid: number | undefined;
    for (let i = 0; i < 50 && pid === undefined; i += 1) {
      const list = (await get(at())).body as {
        processes: { pid: number; stdin: boolean; state: string }[];
      };
      pid = list.processes.find((p) => p.stdin && p.state === 'running')?.pid;
      if (pid === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expectDocumented(
      'post',
      stdin,
      await write(at(`/${pid}/stdin`), { data: 'x'.repeat(900_000) }),
    );
    expectDocumented('post', stdin, await write(at(`/${pid}/stdin`), { close: true }));
    await reading;
    expectDocumented('post', stdin, await write(at(`/${first?.pid}/stdin`), { data: 'x' }));
    expectDocumented('post', stdin, await write(at('/9999999/stdin'), { data: 'x' }));
    expectDocumented('post', stdin, await write(at('/1/stdin', other), { data: 'x' }));
    expectDocumented('post', stdin, await write(at('/1/stdin'), { data: 'x', extra: 1 }));
    expectDocumented('post', stdin, await write(at('/1/stdin'), { data: 'x' }, null));
    expectDocumented('post', stdin, await write(at('/1/stdin'), { data: 'x' }, filesOnly.key));
    expectDocumented('post', stdin, await write(at('/1/stdin'), { data: 'x'.repeat(1_100_000) }));
  });

  it('createTerminal and its WebSocket', async () => {
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

  it('code contexts: create, list, delete, restart, and a cell', async () => {
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

  it('snapshots: create, list, get, delete, and a create from one', async () => {
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

  it('writeFile, readFile and listFiles', async () => {
    const other = `ses_${'5'.repeat(24)}`;
    const processesOnly = await createAccount(stack, 'free', { scopes: ['processes'] });
    const w = (key: string | undefined, body: Record<string, unknown>) =>
      post('/files/write', key, body);
    expectDocumented(
      'post',
      '/files/write',
      await w(account.key, { sessionId, path: 'a.txt', content: 'x' }),
    );
    expectDocumented('post', '/files/write', await w(account.key, { sessionId, path: 'a.txt' }));
    expectDocumented(
      'post',
      '/files/write',
      await w(account.key, { sessionId, path: '../a', content: 'x' }),
    );
    expectDocumented(
      'post',
      '/files/write',
      await w(account.key, { sessionId: other, path: 'a', content: 'x' }),
    );
    expectDocumented(
      'post',
      '/files/write',
      await w(undefined, { sessionId, path: 'a', content: 'x' }),
    );
    expectDocumented(
      'post',
      '/files/write',
      await w(processesOnly.key, { sessionId, path: 'a', content: 'x' }),
    );
    expectDocumented(
      'post',
      '/files/write',
      await w(account.key, { sessionId, path: 'big', content: 'x'.repeat(1_100_000) }),
    );

    const get = (path: string, query: string, key: string | null = account.key) =>
      call(`${stack.url}/v1${path}?${query}`, key === null ? {} : { key });
    for (const path of ['/files/read', '/files/list']) {
      const file = path === '/files/read' ? '&path=a.txt' : '';
      expectDocumented('get', path, await get(path, `sessionId=${sessionId}${file}`));
      expectDocumented('get', path, await get(path, `sessionId=${sessionId}&path=..%2Fx`));
      expectDocumented('get', path, await get(path, `sessionId=${sessionId}&path=missing`));
      expectDocumented('get', path, await get(path, `sessionId=${other}&path=a.txt`));
      expectDocumented('get', path, await get(path, `path=a.txt`));
      expectDocumented('get', path, await get(path, `sessionId=${sessionId}`, null));
      expectDocumented(
        'get',
        path,
        await get(path, `sessionId=${sessionId}&path=a.txt`, processesOnly.key),
      );
    }
    // Past what the read endpoint returns (256 MB).
    await post('/execute', account.key, { sessionId, command: 'fallocate -l 257M huge.bin' });
    const huge = await get('/files/read', `sessionId=${sessionId}&path=huge.bin`);
    expect(huge.body).toMatchObject({
      error: { code: 'file_too_large', details: { path: 'huge.bin' } },
    });
    expectDocumented('get', '/files/read', huge);
    await post('/execute', account.key, { sessionId, command: 'rm huge.bin' });
  });

  it('statFile, removeFile, renameFile and makeDirectory', async () => {
    const other = `ses_${'5'.repeat(24)}`;
    const processesOnly = await createAccount(stack, 'free', { scopes: ['processes'] });
    // An account of its own: the main one's budget of requests per minute is spent elsewhere.
    const owner = await createAccount(stack, 'free');
    const made = await post('/sessions/create', owner.key, {});
    const sessionId = (made.body as { sessionId: string }).sessionId;
    await post('/execute', owner.key, {
      sessionId,
      command: 'mkdir -p ops/full && printf x > ops/full/x && printf y > ops/y && printf z > ops/z',
    });
    const stat = (query: string, key: string | null = owner.key) =>
      call(`${stack.url}/v1/files/stat?${query}`, key === null ? {} : { key });
    for (const query of [
      `sessionId=${sessionId}&path=ops/y`,
      `sessionId=${sessionId}&path=..%2Fx`,
      `sessionId=${sessionId}&path=missing`,
      `sessionId=${other}&path=ops/y`,
      'path=ops/y',
    ]) {
      expectDocumented('get', '/files/stat', await stat(query));
    }
    expectDocumented('get', '/files/stat', await stat(`sessionId=${sessionId}&path=x`, null));
    expectDocumented(
      'get',
      '/files/stat',
      await stat(`sessionId=${sessionId}&path=x`, processesOnly.key),
    );

    const cases: [string, Record<string, unknown>[]][] = [
      [
        '/files/mkdir',
        [
          { path: 'ops/new/dir' },
          { path: '../x' },
          { path: 'ops/y/sub' },
          { sessionId: other, path: 'x' },
        ],
      ],
      [
        '/files/rename',
        [
          { from: 'ops/z', to: 'ops/new/z' },
          { from: 'ops/y', to: 'ops/new/z' },
          { from: 'missing', to: 'ops/q' },
          { from: '.', to: 'ops/q' },
          { sessionId: other, from: 'ops/y', to: 'ops/q' },
        ],
      ],
      [
        '/files/remove',
        [
          { path: 'ops/new/z' },
          { path: 'ops/full' },
          { path: 'missing' },
          { path: '.' },
          { path: 'ops', recursive: 'yes' },
          { sessionId: other, path: 'ops/y' },
        ],
      ],
    ];
    for (const [path, bodies] of cases) {
      for (const body of bodies) {
        expectDocumented('post', path, await post(path, owner.key, { sessionId, ...body }));
      }
      const valid = { sessionId, path: 'x', from: 'x', to: 'y' };
      expectDocumented('post', path, await post(path, undefined, valid));
      expectDocumented('post', path, await post(path, processesOnly.key, valid));
    }
  });

  it('disk_full on execute and writeFile', async () => {
    await post('/execute', account.key, {
      sessionId,
      command: 'fallocate -l $(( $(df -B1 --output=avail . | tail -1) - 4096 )) fill',
    });
    const file = { path: 'f.txt', content: 'x'.repeat(100_000) };
    expectDocumented(
      'post',
      '/files/write',
      await post('/files/write', account.key, { sessionId, ...file }),
    );
    expectDocumented(
      'post',
      '/execute',
      await post('/execute', account.key, { sessionId, command: 'true', files: [file] }),
    );
    // The last blocks too: a directory then has none to take.
    await post('/execute', account.key, {
      sessionId,
      command: 'dd if=/dev/zero of=fill2 bs=1024 2>/dev/null',
    });
    for (const [path, body] of [
      ['/files/mkdir', { path: 'full/a/b' }],
      ['/files/rename', { from: 'a.txt', to: 'full/a/b/a.txt' }],
    ] as const) {
      const full = await post(path, account.key, { sessionId, ...body });
      expect([path, full.body]).toEqual([
        path,
        expect.objectContaining({ error: expect.objectContaining({ code: 'disk_full' }) }),
      ]);
      expectDocumented('post', path, full);
    }
    await post('/execute', account.key, { sessionId, command: 'rm fill fill2' });
  });

  it('deleteSession', async () => {
    const path = '/sessions/{sessionId}';
    const del = (key?: string) =>
      call(v1(`/sessions/${sessionId}`), { method: 'DELETE', ...(key ? { key } : {}) });
    expectDocumented('delete', path, await del());
    const readOnly = await createAccount(stack, 'free', { scopes: ['execute'] });
    expectDocumented('delete', path, await del(readOnly.key));
    expectDocumented('delete', path, await del(account.key));
    expectDocumented('delete', path, await del(account.key));
  });

  it('createWebhook, listWebhooks and deleteWebhook', async () => {
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

  it('rate limits every operation', async () => {
    const limited = await createAccount(stack, 'enterprise', { limits: { requestsPerMinute: 1 } });
    const attempts = everyOperation(stack.url, limited.key);
    await attempts[1]![2](); // uses the one request of the minute
    for (const [method, path, attempt] of attempts) {
      const response = await attempt();
      expect(response.status).toBe(429);
      expectDocumented(method, path, response);
    }
  });

  // Each request waits out the Redis client's retries (about 4.5 s): all at once.
  it('answers every operation with 503 while Redis is out of reach', async () => {
    const answers = await Promise.all(
      everyOperation(noRedis.url, account.key).map(async ([method, path, attempt]) => ({
        method,
        path,
        response: await attempt(),
      })),
    );
    for (const { method, path, response } of answers) {
      expect([method, path, response.status]).toEqual([method, path, 503]);
      expectDocumented(method, path, response);
    }
  });

  it('left no documented response unexercised (but 500)', () => {
    expect(documented.unseen()).toEqual([]);
  });
});
