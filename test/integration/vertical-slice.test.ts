import { call, createAccount } from '../support/api';
import {
  docker,
  sessionContainer,
  sessionContainerNow,
  sessionCpuLimit,
  sessionProcessLimit,
} from '../support/stack';
import { useStackWithAccount } from '../support/use-stack';
import { parseEvents } from '../support/streamed-run';

interface SessionBody {
  sessionId: string;
  expiresAt: string;
  previewUrl: string;
  createdAt: string;
  resourceLimits: Record<string, number>;
}

/** Every test acts as this account on the free plan unless it says otherwise. */
const t = useStackWithAccount('free');

async function createSession(key = t.account.key, body: unknown = {}) {
  return t.as(key).post<SessionBody>('/v1/sessions/create', body);
}

async function execute(sessionId: string, body: Record<string, unknown>, key = t.account.key) {
  return t.as(key).execute(sessionId, body);
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

    const container = await sessionContainer(session.sessionId);
    expect(container).toBeDefined();
    const info = await docker.getContainer(container?.Id as string).inspect();
    expect(info.HostConfig.Privileged).toBe(false);
    expect(info.HostConfig.CapDrop).toEqual(['ALL']);
    // Root in the container (the runner, its spawner, the keep-alive) may start processes as
    // the sandbox user, nothing more; user processes hold none (test/security).
    expect(info.HostConfig.CapAdd).toEqual(['SETUID', 'SETGID', 'SETPCAP']);
    expect(info.HostConfig.SecurityOpt).toContain('no-new-privileges:true');
    expect(info.HostConfig.ReadonlyRootfs).toBe(true);
    expect(info.HostConfig.Memory).toBe(1024 * 1024 * 1024);
    expect(await sessionCpuLimit(info)).toBe(0.25);
    expect(sessionProcessLimit(info)).toBe(256);
    expect(info.Config.User).toBe('0:1000');
    const whoami = await execute(session.sessionId, { command: 'id -u; id -g' });
    expect(whoami.body.stdout).toBe('1000\n1000\n');
    const mounts = info.Mounts.map((m) => `${m.Source ?? ''}:${m.Destination}`).join(' ');
    expect(mounts).not.toContain('docker.sock');

    const run = await execute(session.sessionId, { command: 'echo hi' });
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({ stdout: 'hi\n', stderr: '', exitCode: 0, timedOut: false });
    expect(typeof run.body.executionTime).toBe('number');
    expect(run.body.executionTime).toBeGreaterThanOrEqual(0);

    const deleted = await t.api.deleteSession(session.sessionId);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ deleted: true, sessionId: session.sessionId });
    expect(await sessionContainerNow(session.sessionId)).toBeUndefined();
    const volumes = await docker.listVolumes({
      filters: { label: [`io.sandbox.session=${session.sessionId}`] },
    });
    expect(volumes.Volumes ?? []).toHaveLength(0);

    const gone = await t.api.session(session.sessionId);
    expect(gone.status).toBe(404);
    expect(gone.body).toMatchObject({ error: { code: 'session_not_found' } });
    const again = await t.api.deleteSession(session.sessionId);
    expect(again.status).toBe(404);
    const runAfter = await execute(session.sessionId, { command: 'echo hi' });
    expect(runAfter.status).toBe(404);
    expect(runAfter.body).toMatchObject({ error: { code: 'session_not_found' } });
  });
});

let sharedSession: Promise<string> | undefined;
/** The session the execute cases share (`.id`), made before the first of them. */
function executeSession(): { id: string } {
  const session = { id: '' };
  beforeAll(async () => {
    sharedSession ??= createSession().then((created) => created.body.sessionId);
    session.id = await sharedSession;
  });
  return session;
}

describe('execute', () => {
  const session = executeSession();

  it('reports stderr, a non-zero exit code, env and workingDir', async () => {
    const run = await execute(session.id, {
      command: 'mkdir -p sub && cd sub && pwd; echo "$GREETING" >&2; exit 3',
      env: { GREETING: 'hello there' },
    });
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({
      stdout: '/workspace/sub\n',
      stderr: 'hello there\n',
      exitCode: 3,
    });
    const inSub = await execute(session.id, { command: 'pwd', workingDir: 'sub' });
    expect(inSub.body.stdout).toBe('/workspace/sub\n');
  });

  it('keeps files between runs and counts them in session info', async () => {
    await execute(session.id, { command: 'echo one > a.txt && echo two > b.txt' });
    const read = await execute(session.id, { command: 'cat a.txt b.txt' });
    expect(read.body.stdout).toBe('one\ntwo\n');
    const info = await t.api.session(session.id);
    expect(info.status).toBe(200);
    expect(info.body).toMatchObject({
      sessionId: session.id,
      state: 'active',
      previewUrl: `https://${session.id.replace('_', '-')}.preview.test`,
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
    const info = await t.api.session(other);
    expect(info.body.activeProcesses).toBe(2);
  });

  it('runs as an unprivileged user on a read-only root', async () => {
    const run = await execute(session.id, {
      command:
        'id -u; touch /etc/x 2>/dev/null && echo wrote || echo denied; test -S /var/run/docker.sock && echo sock || echo nosock',
    });
    expect(run.body.stdout).toBe('1000\ndenied\nnosock\n');
  });
});

describe('execute: timeouts and streams', () => {
  const session = executeSession();

  it('answers 408 with the partial output when the timeout passes', async () => {
    const run = await execute(session.id, {
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
    const after = await execute(session.id, { command: "pgrep -f 'sleep [2]0' || echo none" });
    expect(after.body.stdout).toBe('none\n');
  });

  it('streams chunks as Server-Sent Events, then exit and result', async () => {
    const response = await t.api.executeStream(session.id, {
      command: 'echo out; echo err >&2; exit 2',
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
    expect(events[0]?.event).toBe('started');
    const tail = events.slice(-2);
    expect(tail[0]).toEqual({ event: 'exit', data: { type: 'exit', code: 2 } });
    expect(tail[1]?.event).toBe('result');
    expect(tail[1]?.data).toMatchObject({ exitCode: 2, stdout: 'out\n', stderr: 'err\n' });
  });
});

describe('execute: stream starts and bad requests', () => {
  const session = executeSession();

  it('says started with the pid and process id first for every streamed run (issue 42)', async () => {
    // Silent and at once (named only by its result on the node), silent for a while (named
    // after 100 ms), and printing at once (named by its first output): each says `started`.
    for (const command of ['true', 'sleep 0.3', 'echo at once']) {
      const text = await (await t.api.executeStream(session.id, { command })).text();
      const events = parseEvents(text);
      expect([command, events.map((e) => e.event).filter((e) => e !== 'stdout')]).toEqual([
        command,
        ['started', 'exit', 'result'],
      ]);
      expect(events[0]?.data).toEqual({
        type: 'started',
        pid: expect.any(Number),
        processId: expect.stringMatching(/^proc_[a-f0-9]{16}$/),
      });
      expect(events[0]?.id).toBe(`${String(events[0]?.data['processId'])}:0:0`);
    }
  });

  it('rejects bad requests with the spec error shape', async () => {
    const neither = await execute(session.id, {});
    expect(neither.status).toBe(400);
    expect(neither.body).toMatchObject({
      error: { code: 'invalid_request', details: { field: 'command' } },
    });
    const both = await execute(session.id, { code: 'x', command: 'y' });
    expect(both.body).toMatchObject({
      error: { code: 'invalid_request', details: { field: 'code' } },
    });
    const escape = await execute(session.id, { command: 'pwd', workingDir: '../etc' });
    expect(escape.status).toBe(400);
    expect(escape.body).toMatchObject({ error: { code: 'invalid_path' } });
    const tooLong = await execute(session.id, { command: 'true', timeout: 31 });
    expect(tooLong.body).toMatchObject({
      error: { code: 'invalid_request', details: { field: 'timeout' } },
    });
  });
});

describe('authentication and errors', () => {
  it('answers 401 unauthorized for a missing, malformed or unknown key', async () => {
    for (const key of [undefined, 'nope', 'sk_live_' + 'x'.repeat(40)]) {
      const response = await call(`${t.stack.url}/v1/sessions`, key === undefined ? {} : { key });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
      expect(response.body).toEqual({
        error: { code: 'unauthorized', message: expect.any(String) as string },
      });
    }
  });

  it('stops accepting a revoked key at once', async () => {
    const account = await createAccount(t.stack, 'free');
    const api = t.as(account.key);
    expect((await api.get('/v1/sessions')).status).toBe(200);
    const revoked = await t.as(t.stack.adminToken).post(`/admin/v1/keys/${account.keyId}/revoke`);
    expect(revoked.status).toBe(200);
    expect((await api.get('/v1/sessions')).status).toBe(401);
  });

  it('answers 403 forbidden for a key without the scope', async () => {
    const readOnly = await createAccount(t.stack, 'free', { scopes: ['sessions'] });
    const session = await createSession(readOnly.key);
    const run = await execute(session.body.sessionId, { command: 'true' }, readOnly.key);
    expect(run.status).toBe(403);
    expect(run.body).toMatchObject({ error: { code: 'forbidden', details: { scope: 'execute' } } });
  });

  it('answers 400 for malformed JSON and 404 for unknown routes', async () => {
    const malformed = await call(`${t.stack.url}/v1/sessions/create`, {
      method: 'POST',
      key: t.account.key,
      rawBody: '{"ttl": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ error: { code: 'invalid_request' } });
    const unknown = await t.api.get('/v1/nothing-here');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ error: { code: 'not_found' } });
    const outside = await call(`${t.stack.url}/nothing`);
    expect(outside.status).toBe(404);
    expect(outside.body).toMatchObject({ error: { code: 'not_found' } });
    // No route is no route, with or without a key; known routes still want one.
    const anonymous = await call(`${t.stack.url}/v1/nothing-here`);
    expect(anonymous.status).toBe(404);
    expect(anonymous.body).toMatchObject({ error: { code: 'not_found' } });
    const wrongMethod = await call(`${t.stack.url}/v1/execute`);
    expect(wrongMethod.status).toBe(404);
    expect((await call(`${t.stack.url}/v1/sessions`)).status).toBe(401);
  });

  it("answers 404 for another account's session, exactly like a missing one", async () => {
    const other = await createAccount(t.stack, 'free');
    const theirs = (await createSession(other.key)).body.sessionId;
    const info = await t.api.session(theirs);
    const missing = await t.api.session(`ses_${'0'.repeat(24)}`);
    expect(info.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(info.body).toMatchObject({ error: { code: 'session_not_found' } });
    expect((await execute(theirs, { command: 'true' })).status).toBe(404);
    const del = await t.api.deleteSession(theirs);
    expect(del.status).toBe(404);
    expect((await t.as(other.key).session(theirs)).status).toBe(200);
  });

  it('sends the rate-limit headers and X-Request-Id on every authenticated response', async () => {
    const response = await t.api.get('/v1/sessions', { 'x-request-id': 'req-123' });
    expect(response.headers.get('x-ratelimit-limit')).toBe('100');
    expect(Number(response.headers.get('x-ratelimit-remaining'))).toBeLessThan(100);
    expect(Number(response.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000);
    expect(response.headers.get('x-request-id')).toBe('req-123');
  });
});
