import {
  FileNotFoundError,
  Sandbox,
  WatchLimitExceededError,
  type FileWatchEvent,
} from '@sandbox/sdk';
import { MANUAL_SWEEPS } from '../support/stack';
import { parseEvents, StreamedRun } from '../support/streamed-run';
import { useStackWithAccount } from '../support/use-stack';

/**
 * File watches (ADR 60) against the real stack: the changes runs make, seen through
 * `GET /v1/files/watch` and the SDK's `files.watch`; the refusals before the stream; the
 * bound of 4 a session; the end of a watch when its directory, its session or the session's
 * sandbox (deep sleep) goes.
 */
const t = useStackWithAccount('free', {
  session: true,
  stack: {
    gatewayEnv: { SESSION_IDLE_AFTER_S: '1', SESSION_DEEP_SLEEP_AFTER_S: '2', ...MANUAL_SWEEPS },
  },
});

const q = encodeURIComponent;

/** Opens a watch's stream (the raw response). */
function openWatch(query: string, sessionId = t.sessionId, signal?: AbortSignal) {
  return fetch(`${t.stack.url}/v1/files/watch?sessionId=${sessionId}&${query}`, {
    headers: { authorization: `Bearer ${t.account.key}`, accept: 'text/event-stream' },
    ...(signal ? { signal } : {}),
  });
}

/** A watch in place: its stream read up to `ready`. */
async function watching(query: string, sessionId = t.sessionId) {
  const abort = new AbortController();
  const response = await openWatch(query, sessionId, abort.signal);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/event-stream');
  const stream = new StreamedRun(response);
  await stream.until('event: ready');
  return { stream, close: () => abort.abort() };
}

/** A watch opened as soon as the session has a place for it (within 10 s), or the refusal. */
async function openedSoon(sessionId: string): Promise<Response> {
  // The node ends a watch once the gateway cancels its call: soon, not at once.
  const deadline = Date.now() + 10_000;
  let answer = await openWatch('', sessionId);
  while (answer.status === 429 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    answer = await openWatch('', sessionId);
  }
  expect([answer.status, answer.status === 200 ? '' : await answer.text()]).toEqual([200, '']);
  return answer;
}

/**
 * The changes a watch sent, writes to a file in a row taken as one: the node coalesces those
 * within a few milliseconds of each other, and a slow machine may space two of a run apart.
 */
const changesOf = (stream: StreamedRun) =>
  parseEvents(stream.text)
    .filter((event) => event.event === 'change')
    .map((event) => event.data)
    .filter((data, i, all) => JSON.stringify(data) !== JSON.stringify(all[i - 1]));

const sh = async (command: string, sessionId = t.sessionId): Promise<void> => {
  const ran = await t.api.execute<{ exitCode: number; stderr: string }>(sessionId, { command });
  expect(ran.body).toMatchObject({ exitCode: 0, stderr: '' });
};

describe('GET /v1/files/watch', () => {
  it("streams the changes a session's runs make under the directory", async () => {
    await sh('mkdir -p w1/src/lib');
    const { stream, close } = await watching(`path=w1&recursive=true`);
    expect(parseEvents(stream.text)[0]).toEqual({
      id: '1',
      event: 'ready',
      data: { type: 'ready', directories: 3 },
    });
    await sh(
      'cd w1 && echo one > src/lib/a.txt && echo two >> src/lib/a.txt && mv src/lib/a.txt b.txt && rm b.txt && mkdir -p made/deep && touch made/deep/c.txt',
    );
    await stream.until('made/deep/c.txt');
    expect(changesOf(stream)).toEqual([
      { type: 'change', change: 'create', path: 'w1/src/lib/a.txt', isDirectory: false },
      { type: 'change', change: 'write', path: 'w1/src/lib/a.txt', isDirectory: false },
      {
        type: 'change',
        change: 'rename',
        path: 'w1/b.txt',
        oldPath: 'w1/src/lib/a.txt',
        isDirectory: false,
      },
      { type: 'change', change: 'remove', path: 'w1/b.txt', isDirectory: false },
      { type: 'change', change: 'create', path: 'w1/made', isDirectory: true },
      ...[
        { type: 'change', change: 'create', path: 'w1/made/deep', isDirectory: true },
        { type: 'change', change: 'create', path: 'w1/made/deep/c.txt', isDirectory: false },
      ],
    ]);
    close();
  });

  it('watches one directory unless asked for those under it, and the workspace by default', async () => {
    await sh('mkdir -p w2/sub');
    const { stream, close } = await watching('');
    expect(parseEvents(stream.text)[0]?.data).toEqual({ type: 'ready', directories: 1 });
    await sh('touch w2/sub/deep.txt && touch top-w2.txt');
    await stream.until('top-w2.txt');
    expect(changesOf(stream)).toEqual([
      { type: 'change', change: 'create', path: 'top-w2.txt', isDirectory: false },
    ]);
    close();
  });

  it('refuses, as JSON before any event, what it cannot watch', async () => {
    await sh('mkdir -p w3 && touch w3/file.txt && ln -s /etc w3/etc-link');
    const refusals: [string, number, string][] = [
      ['path=w3/missing', 404, 'file_not_found'],
      ['path=w3/file.txt', 400, 'invalid_path'],
      [`path=${q('../etc')}`, 400, 'invalid_path'],
      ['path=w3/etc-link', 400, 'invalid_path'],
      ['path=w3&recursive=yes', 400, 'invalid_request'],
    ];
    for (const [query, status, code] of refusals) {
      const response = await openWatch(query);
      expect([query, response.status]).toEqual([query, status]);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe(code);
    }
  });
});

describe('the ends of a watch', () => {
  it('holds 4 watches a session; a watch its client left frees its place', async () => {
    const id = await t.api.createSession();
    const open = await Promise.all([1, 2, 3, 4].map(() => watching('', id)));
    const fifth = await openWatch('', id);
    expect(fifth.status).toBe(429);
    expect(await fifth.json()).toMatchObject({
      error: { code: 'watch_limit_exceeded', details: { max: 4 } },
    });
    open[0]?.close();
    const again = await openedSoon(id);
    await again.body?.cancel();
    for (const watch of open) watch.close();
  });

  it('holds no watch for a client that left while the session woke from deep sleep', async () => {
    const id = await t.api.createSession();
    await new Promise((resolve) => setTimeout(resolve, 2400));
    expect((await t.stack.gateways[0]!.sweeper.sweep()).slept).toContain(id);
    const abort = new AbortController();
    const leaving = openWatch('', id, abort.signal).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 30));
    abort.abort();
    await leaving;
    const open = await Promise.all([1, 2, 3].map(() => watching('', id)));
    // A fourth: the left watch, had it been made, would hold the place for good.
    const fourth = await openedSoon(id);
    await fourth.body?.cancel();
    for (const watch of open) watch.close();
  });

  it('ends with the reason when the directory, or the session, goes', async () => {
    const id = await t.api.createSession();
    await sh('mkdir -p gone', id);
    const dir = await watching('path=gone', id);
    const session = await watching('', id);
    await sh('rm -r gone', id);
    expect(await dir.stream.rest()).toContain(
      'event: end\ndata: {"type":"end","reason":"removed"}',
    );
    expect((await t.api.deleteSession(id)).status).toBe(200);
    expect(await session.stream.rest()).toContain('data: {"type":"end","reason":"stopped"}');
  });

  it('does not keep the session awake, and ends when it goes to deep sleep', async () => {
    const id = await t.api.createSession();
    const { stream } = await watching('', id);
    // Past the deep-sleep delay (2 s here), the open watch notwithstanding.
    await new Promise((resolve) => setTimeout(resolve, 2400));
    expect((await t.stack.gateways[0]!.sweeper.sweep()).slept).toContain(id);
    expect(await stream.rest()).toContain('data: {"type":"end","reason":"stopped"}');
  });
});

describe('the SDK', () => {
  const connect = (id = t.sessionId) =>
    Sandbox.connect(id, { apiKey: t.account.key, apiUrl: `${t.stack.url}/v1` });

  it('files.watch resolves once the watch is in place, and yields its changes', async () => {
    const sandbox = await connect();
    await sandbox.files.mkdir('sdk-w/a');
    const watch = await sandbox.files.watch('sdk-w', { recursive: true });
    expect(watch.directories).toBe(2);
    await sandbox.files.write('sdk-w/a/f.txt', 'hi');
    const seen: FileWatchEvent[] = [];
    for await (const event of watch) {
      seen.push(event);
      if (event.type === 'change' && event.change === 'rename') break;
    }
    expect(watch.ended).toBe('closed');
    // An atomic write lands as a rename of its temporary file.
    expect(seen.at(-1)).toMatchObject({ change: 'rename', path: 'sdk-w/a/f.txt' });
  });

  it('throws the refusals as classes', async () => {
    const sandbox = await connect(await t.api.createSession());
    await expect(sandbox.files.watch('none')).rejects.toBeInstanceOf(FileNotFoundError);
    const held = await Promise.all([1, 2, 3, 4].map(() => sandbox.files.watch()));
    await expect(sandbox.files.watch()).rejects.toBeInstanceOf(WatchLimitExceededError);
    for (const watch of held) watch.close();
  });
});
