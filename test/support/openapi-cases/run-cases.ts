import { call, createAccount } from '../api';
import { openApiHelpers, type OpenApiContext } from './context';

function execute(t: OpenApiContext): void {
  const { expectDocumented, post } = openApiHelpers(t);
  it('execute', async () => {
    const { stack, account, sessionId, noAgent } = t;
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
}

function killProcesses(t: OpenApiContext): void {
  const { expectDocumented, post } = openApiHelpers(t);
  it('killProcesses', async () => {
    const { stack, account, sessionId } = t;
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
}

function resumedExecute(t: OpenApiContext): void {
  const { expectDocumented, v1 } = openApiHelpers(t);
  it('execute resumed with Last-Event-ID', async () => {
    const { account, sessionId } = t;
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
}

const PROCESSES = '/sessions/{sessionId}/processes';
const OTHER_SESSION = `ses_${'7'.repeat(24)}`;

/** Paths of the shared session's processes, and a GET of one (key null: no key at all). */
function processCalls(t: OpenApiContext) {
  const { v1 } = openApiHelpers(t);
  const at = (rest = '', session = t.sessionId) => `/sessions/${session}/processes${rest}`;
  const get = (path: string, key: string | null = t.account.key, headers = {}) =>
    call(v1(path), { key: key ?? undefined, headers });
  return { at, get };
}

function processes(t: OpenApiContext): void {
  const { expectDocumented, post } = openApiHelpers(t);
  const { at, get } = processCalls(t);
  it('processes: list, one, output', async () => {
    const { stack, account, sessionId, noAgent } = t;
    const base = PROCESSES;
    const other = OTHER_SESSION;
    await post('/execute', account.key, { sessionId, command: 'echo listed' });
    const listed = await get(at());
    expectDocumented('get', base, listed);
    const [first] = (listed.body as { processes: { pid: number; id: string }[] }).processes;
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
  });
}

function processStdin(t: OpenApiContext): void {
  const { expectDocumented, post } = openApiHelpers(t);
  const { at, get } = processCalls(t);
  it('processes: stdin', async () => {
    const { stack, account, sessionId } = t;
    const stdin = `${PROCESSES}/{pid}/stdin`;
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
    let exited: number | undefined; // the first run of the list, long over
    for (let i = 0; i < 50 && pid === undefined; i += 1) {
      const list = (await get(at())).body as {
        processes: { pid: number; stdin: boolean; state: string }[];
      };
      exited ??= list.processes[0]?.pid;
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
    const filesOnly = await createAccount(stack, 'free', { scopes: ['files'] });
    expectDocumented('post', stdin, await write(at(`/${exited}/stdin`), { data: 'x' }));
    expectDocumented('post', stdin, await write(at('/9999999/stdin'), { data: 'x' }));
    expectDocumented('post', stdin, await write(at('/1/stdin', OTHER_SESSION), { data: 'x' }));
    expectDocumented('post', stdin, await write(at('/1/stdin'), { data: 'x', extra: 1 }));
    expectDocumented('post', stdin, await write(at('/1/stdin'), { data: 'x' }, null));
    expectDocumented('post', stdin, await write(at('/1/stdin'), { data: 'x' }, filesOnly.key));
    expectDocumented('post', stdin, await write(at('/1/stdin'), { data: 'x'.repeat(1_100_000) }));
  });
}

/** Runs: execute, kill, a stream resumed, and the processes endpoints. */
export const runCases: ((t: OpenApiContext) => void)[] = [
  execute,
  killProcesses,
  resumedExecute,
  processes,
  processStdin,
];
