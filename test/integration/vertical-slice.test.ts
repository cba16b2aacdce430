import { call, createAccount, type TestAccount } from '../support/api';
import { docker, startStack, type TestStack } from '../support/stack';

interface SessionBody {
  sessionId: string;
  expiresAt: string;
  previewUrl: string;
  createdAt: string;
  resourceLimits: Record<string, number>;
}

let stack: TestStack;
let free: TestAccount;

beforeAll(async () => {
  stack = await startStack();
  free = await createAccount(stack, 'free');
});

afterAll(async () => {
  await stack?.stop();
});

async function createSession(key = free.key, body: unknown = {}) {
  return call<SessionBody>(`${stack.url}/v1/sessions/create`, { method: 'POST', key, body });
}

async function execute(sessionId: string, body: Record<string, unknown>, key = free.key) {
  return call(`${stack.url}/v1/execute`, { method: 'POST', key, body: { sessionId, ...body } });
}

describe('create → execute → info → delete, through every real layer', () => {
  it('runs `echo hi` in a hardened container and removes it on delete', async () => {
    const created = await createSession();
    expect(created.status).toBe(200);
    const session = created.body;
    expect(session.sessionId).toMatch(/^ses_[a-z0-9]{24}$/);
    expect(session.previewUrl).toBe(`https://${session.sessionId.replace('_', '-')}.preview.test`);
    expect(session.resourceLimits).toEqual({ memory: 1024, cpu: 0.25, timeout: 30, disk: 1024 });
    const ttlMs = Date.parse(session.expiresAt) - Date.parse(session.createdAt);
    expect(Math.abs(ttlMs - 86_400_000)).toBeLessThan(5000);

    const [container] = await docker.listContainers({
      filters: { label: [`io.sandbox.session=${session.sessionId}`] },
    });
    expect(container).toBeDefined();
    const info = await docker.getContainer(container?.Id as string).inspect();
    expect(info.HostConfig.Privileged).toBe(false);
    expect(info.HostConfig.CapDrop).toEqual(['ALL']);
    expect(info.HostConfig.SecurityOpt).toContain('no-new-privileges:true');
    expect(info.HostConfig.ReadonlyRootfs).toBe(true);
    expect(info.HostConfig.Memory).toBe(1024 * 1024 * 1024);
    expect(info.HostConfig.NanoCpus).toBe(250_000_000);
    expect(info.HostConfig.PidsLimit).toBe(256);
    expect(info.Config.User).toBe('1000:1000');
    const mounts = info.Mounts.map((m) => `${m.Source ?? ''}:${m.Destination}`).join(' ');
    expect(mounts).not.toContain('docker.sock');

    const run = await execute(session.sessionId, { command: 'echo hi' });
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({ stdout: 'hi\n', stderr: '', exitCode: 0, timedOut: false });
    expect(typeof run.body.executionTime).toBe('number');
    expect(run.body.executionTime).toBeGreaterThanOrEqual(0);

    const deleted = await call(`${stack.url}/v1/sessions/${session.sessionId}`, {
      method: 'DELETE',
      key: free.key,
    });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ deleted: true, sessionId: session.sessionId });
    const left = await docker.listContainers({
      all: true,
      filters: { label: [`io.sandbox.session=${session.sessionId}`] },
    });
    expect(left).toHaveLength(0);
    const volumes = await docker.listVolumes({
      filters: { label: [`io.sandbox.session=${session.sessionId}`] },
    });
    expect(volumes.Volumes ?? []).toHaveLength(0);

    const gone = await call(`${stack.url}/v1/sessions/${session.sessionId}`, { key: free.key });
    expect(gone.status).toBe(404);
    expect(gone.body).toMatchObject({ error: { code: 'session_not_found' } });
    const again = await call(`${stack.url}/v1/sessions/${session.sessionId}`, {
      method: 'DELETE',
      key: free.key,
    });
    expect(again.status).toBe(404);
    const runAfter = await execute(session.sessionId, { command: 'echo hi' });
    expect(runAfter.status).toBe(404);
    expect(runAfter.body).toMatchObject({ error: { code: 'session_not_found' } });
  });
});

describe('execute', () => {
  let sessionId: string;
  beforeAll(async () => {
    sessionId = (await createSession()).body.sessionId;
  });

  it('reports stderr, a non-zero exit code, env and workingDir', async () => {
    const run = await execute(sessionId, {
      command: 'mkdir -p sub && cd sub && pwd; echo "$GREETING" >&2; exit 3',
      env: { GREETING: 'hello there' },
    });
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({
      stdout: '/workspace/sub\n',
      stderr: 'hello there\n',
      exitCode: 3,
    });
    const inSub = await execute(sessionId, { command: 'pwd', workingDir: 'sub' });
    expect(inSub.body.stdout).toBe('/workspace/sub\n');
  });

  it('keeps files between runs and counts them in session info', async () => {
    await execute(sessionId, { command: 'echo one > a.txt && echo two > b.txt' });
    const read = await execute(sessionId, { command: 'cat a.txt b.txt' });
    expect(read.body.stdout).toBe('one\ntwo\n');
    const info = await call(`${stack.url}/v1/sessions/${sessionId}`, { key: free.key });
    expect(info.status).toBe(200);
    expect(info.body).toMatchObject({
      sessionId,
      state: 'active',
      filesCount: 2,
      activeProcesses: 0,
      metadata: {},
    });
    for (const field of ['createdAt', 'expiresAt', 'lastActive']) {
      expect(Number.isNaN(Date.parse(info.body[field] as string))).toBe(false);
    }
  });

  it('counts background processes in activeProcesses', async () => {
    const other = (await createSession()).body.sessionId;
    await execute(other, {
      command: 'nohup sleep 300 >/dev/null 2>&1 & nohup sleep 301 >/dev/null 2>&1 &',
    });
    const info = await call(`${stack.url}/v1/sessions/${other}`, { key: free.key });
    expect(info.body.activeProcesses).toBe(2);
  });

  it('runs as an unprivileged user on a read-only root', async () => {
    const run = await execute(sessionId, {
      command:
        'id -u; touch /etc/x 2>/dev/null && echo wrote || echo denied; test -S /var/run/docker.sock && echo sock || echo nosock',
    });
    expect(run.body.stdout).toBe('1000\ndenied\nnosock\n');
  });

  it('answers 408 with the partial output when the timeout passes', async () => {
    const run = await execute(sessionId, {
      command: 'echo started; sleep 20; echo never',
      timeout: 1,
    });
    expect(run.status).toBe(408);
    expect(run.body).toMatchObject({
      error: {
        code: 'execution_timeout',
        stdout: 'started\n',
        stderr: '',
        details: { timeout: 1 },
      },
    });
    const after = await execute(sessionId, { command: "pgrep -f 'sleep [2]0' || echo none" });
    expect(after.body.stdout).toBe('none\n');
  });

  it('streams chunks as Server-Sent Events, then exit and result', async () => {
    const response = await fetch(`${stack.url}/v1/execute`, {
      method: 'POST',
      headers: { authorization: `Bearer ${free.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ sessionId, command: 'echo out; echo err >&2; exit 2', stream: true }),
    });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const text = await response.text();
    const events = text
      .split('\n\n')
      .filter((block) => block.includes('event: '))
      .map((block) => {
        const event = /event: (.*)/.exec(block)?.[1];
        const data = JSON.parse(/data: (.*)/.exec(block)?.[1] ?? 'null') as Record<string, unknown>;
        return { event, data };
      });
    expect(events.filter((e) => e.event === 'stdout').map((e) => e.data)).toEqual([
      { type: 'stdout', data: 'out\n' },
    ]);
    expect(events.filter((e) => e.event === 'stderr').map((e) => e.data)).toEqual([
      { type: 'stderr', data: 'err\n' },
    ]);
    const tail = events.slice(-2);
    expect(tail[0]).toEqual({ event: 'exit', data: { type: 'exit', code: 2 } });
    expect(tail[1]?.event).toBe('result');
    expect(tail[1]?.data).toMatchObject({ exitCode: 2, stdout: 'out\n', stderr: 'err\n' });
  });

  it('rejects bad requests with the spec error shape', async () => {
    const neither = await execute(sessionId, {});
    expect(neither.status).toBe(400);
    expect(neither.body).toMatchObject({
      error: { code: 'invalid_request', details: { field: 'command' } },
    });
    const both = await execute(sessionId, { code: 'x', command: 'y' });
    expect(both.body).toMatchObject({
      error: { code: 'invalid_request', details: { field: 'code' } },
    });
    const escape = await execute(sessionId, { command: 'pwd', workingDir: '../etc' });
    expect(escape.status).toBe(400);
    expect(escape.body).toMatchObject({ error: { code: 'invalid_path' } });
    const tooLong = await execute(sessionId, { command: 'true', timeout: 31 });
    expect(tooLong.body).toMatchObject({
      error: { code: 'invalid_request', details: { field: 'timeout' } },
    });
  });
});

describe('authentication and errors', () => {
  it('answers 401 unauthorized for a missing, malformed or unknown key', async () => {
    for (const key of [undefined, 'nope', 'sk_live_' + 'x'.repeat(40)]) {
      const response = await call(`${stack.url}/v1/sessions`, key === undefined ? {} : { key });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
      expect(response.body).toEqual({
        error: { code: 'unauthorized', message: expect.any(String) as string },
      });
    }
  });

  it('stops accepting a revoked key at once', async () => {
    const account = await createAccount(stack, 'free');
    expect((await call(`${stack.url}/v1/sessions`, { key: account.key })).status).toBe(200);
    const revoked = await call(`${stack.url}/admin/v1/keys/${account.keyId}/revoke`, {
      method: 'POST',
      key: stack.adminToken,
    });
    expect(revoked.status).toBe(200);
    expect((await call(`${stack.url}/v1/sessions`, { key: account.key })).status).toBe(401);
  });

  it('answers 403 forbidden for a key without the scope', async () => {
    const readOnly = await createAccount(stack, 'free', { scopes: ['sessions'] });
    const session = await createSession(readOnly.key);
    const run = await execute(session.body.sessionId, { command: 'true' }, readOnly.key);
    expect(run.status).toBe(403);
    expect(run.body).toMatchObject({ error: { code: 'forbidden', details: { scope: 'execute' } } });
  });

  it('answers 400 for malformed JSON and 404 for unknown routes', async () => {
    const malformed = await call(`${stack.url}/v1/sessions/create`, {
      method: 'POST',
      key: free.key,
      rawBody: '{"ttl": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ error: { code: 'invalid_request' } });
    const unknown = await call(`${stack.url}/v1/nothing-here`, { key: free.key });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ error: { code: 'not_found' } });
    const outside = await call(`${stack.url}/nothing`);
    expect(outside.status).toBe(404);
    expect(outside.body).toMatchObject({ error: { code: 'not_found' } });
    // No route is no route, with or without a key; known routes still want one.
    const anonymous = await call(`${stack.url}/v1/nothing-here`);
    expect(anonymous.status).toBe(404);
    expect(anonymous.body).toMatchObject({ error: { code: 'not_found' } });
    const wrongMethod = await call(`${stack.url}/v1/execute`);
    expect(wrongMethod.status).toBe(404);
    expect((await call(`${stack.url}/v1/sessions`)).status).toBe(401);
  });

  it("answers 404 for another account's session, exactly like a missing one", async () => {
    const other = await createAccount(stack, 'free');
    const theirs = (await createSession(other.key)).body.sessionId;
    const info = await call(`${stack.url}/v1/sessions/${theirs}`, { key: free.key });
    const missing = await call(`${stack.url}/v1/sessions/ses_${'0'.repeat(24)}`, { key: free.key });
    expect(info.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(info.body).toMatchObject({ error: { code: 'session_not_found' } });
    expect((await execute(theirs, { command: 'true' })).status).toBe(404);
    const del = await call(`${stack.url}/v1/sessions/${theirs}`, {
      method: 'DELETE',
      key: free.key,
    });
    expect(del.status).toBe(404);
    expect((await call(`${stack.url}/v1/sessions/${theirs}`, { key: other.key })).status).toBe(200);
  });

  it('sends the rate-limit headers and X-Request-Id on every authenticated response', async () => {
    const response = await call(`${stack.url}/v1/sessions`, {
      key: free.key,
      headers: { 'x-request-id': 'req-123' },
    });
    expect(response.headers.get('x-ratelimit-limit')).toBe('100');
    expect(Number(response.headers.get('x-ratelimit-remaining'))).toBeLessThan(100);
    expect(Number(response.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000);
    expect(response.headers.get('x-request-id')).toBe('req-123');
  });
});
