import { createAccount } from '../support/api';
import type { ApiClient } from '../support/api-client';
import { parseEvents, StreamedRun } from '../support/streamed-run';
import { useStack } from '../support/use-stack';

/**
 * File watches (ADR 60) against another account and against abuse: a stranger's key gets the
 * same 404 as for a missing session and no stream; a key without the files scope gets 403; a
 * symlink a run made never lets a watch see outside /workspace; a flood of changes to a client
 * that does not read is dropped (and said to be) rather than held in the gateway or the agent.
 */
const t = useStack();
let mine: ApiClient;
let mineKey: string;
let theirsKey: string;
let sessionId: string;

beforeAll(async () => {
  mineKey = (await createAccount(t.stack, 'paid')).key;
  theirsKey = (await createAccount(t.stack, 'paid')).key;
  mine = t.as(mineKey);
  sessionId = await mine.createSession();
});

const sh = async (command: string): Promise<void> => {
  const ran = await mine.execute<{ exitCode: number; stderr: string }>(sessionId, { command });
  expect(ran.body).toMatchObject({ exitCode: 0, stderr: '' });
};

function openWatch(key: string, query: string, signal?: AbortSignal): Promise<Response> {
  return fetch(`${t.stack.url}/v1/files/watch?${query}`, {
    headers: { authorization: `Bearer ${key}` },
    ...(signal ? { signal } : {}),
  });
}

it('answers another account 404 session_not_found, as for a missing session, with no stream', async () => {
  await sh('mkdir -p secret');
  const missing = `ses_${'0'.repeat(24)}`;
  for (const session of [sessionId, missing]) {
    for (const query of [`sessionId=${session}`, `sessionId=${session}&path=secret`]) {
      const answer = await openWatch(theirsKey, query);
      expect(answer.status).toBe(404);
      expect(answer.headers.get('content-type')).toContain('application/json');
      expect(await answer.json()).toMatchObject({ error: { code: 'session_not_found' } });
    }
  }
});

it('needs the files scope', async () => {
  const key = (await createAccount(t.stack, 'paid', { scopes: ['sessions', 'execute'] })).key;
  const own = await t.as(key).createSession();
  const answer = await openWatch(key, `sessionId=${own}`);
  expect(answer.status).toBe(403);
  expect(await answer.json()).toMatchObject({ error: { code: 'forbidden' } });
});

it('never follows a symlink a run made out of /workspace', async () => {
  await sh('mkdir -p linked && ln -s /tmp linked/tmp-link && ln -s /tmp tmp-top');
  const refused = await openWatch(mineKey, `sessionId=${sessionId}&path=tmp-top`);
  expect(refused.status).toBe(400);
  expect(await refused.json()).toMatchObject({ error: { code: 'invalid_path' } });
  const abort = new AbortController();
  const response = await openWatch(
    mineKey,
    `sessionId=${sessionId}&path=linked&recursive=true`,
    abort.signal,
  );
  const stream = new StreamedRun(response);
  await stream.until('event: ready');
  // Written through the link, and beside it: only the second is the watch's.
  await sh(
    'echo x > linked/tmp-link/outside.txt && mkdir /tmp/made-outside && touch linked/in.txt',
  );
  await stream.until('linked/in.txt');
  const paths = parseEvents(stream.text).map((event) => event.data['path']);
  expect(paths).toEqual([undefined, 'linked/in.txt']);
  abort.abort();
});

it('drops a flood of changes to a client that does not read, says so, and goes on', async () => {
  await sh('mkdir -p flood');
  const abort = new AbortController();
  const response = await openWatch(
    mineKey,
    `sessionId=${sessionId}&path=flood&recursive=true`,
    abort.signal,
  );
  const stream = new StreamedRun(response);
  await stream.until('event: ready');
  // 8,000 files 14 directories deep under names of 250 characters: each change's path is
  // about 3.7 KB, 30 MB in all while nothing reads the stream: well past what the sockets on
  // the way buffer (a few MB each), so that the node must drop some.
  await sh(
    'cd flood && d=$(printf "%0250d" 0) && deep=$(printf "$d/%.0s" $(seq 1 14)) && mkdir -p "$deep" && cd "$deep" && seq -f "%0200g" 1 8000 | xargs touch',
  );
  await stream.until('event: overflow');
  // Changes after the overflow come again, once the node has caught up: a change made while
  // it still drops is said by another `overflow`, and then made again.
  const overflows = (text: string) => text.split('event: overflow').length - 1;
  let seen = false;
  for (let attempt = 0; !seen && attempt < 20; attempt += 1) {
    const before = overflows(stream.text);
    await sh(`touch flood/after-the-flood-${attempt}.txt`);
    await stream.untilTrue(
      (text) => text.includes(`after-the-flood-${attempt}.txt`) || overflows(text) > before,
      `the change or another overflow`,
    );
    seen = stream.text.includes(`after-the-flood-${attempt}.txt`);
  }
  expect(seen).toBe(true);
  const events = parseEvents(stream.text);
  // Fewer than the changes made: what could not be sent was dropped, not kept.
  expect(events.filter((event) => event.event === 'change').length).toBeLessThan(8_014);
  abort.abort();
});
