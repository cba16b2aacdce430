import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAccount } from '../support/api';
import { parseEvents, runReadingStdin } from '../support/streamed-run';
import { useStackWithStranger } from '../support/use-stack';

/**
 * Runs' kept output and stdin (issue 14) against another account and against abuse: nobody
 * but the session's account lists its runs, reads or follows their output, resumes their
 * streams or writes to their stdin; a process id from another session is not found in one's
 * own; a key without the processes scope gets nowhere; a deleted session's logs are gone from
 * the node; oversized and malformed input is refused.
 */
const t = useStackWithStranger();

interface Listed {
  processes: { id: string; pid: number }[];
}

it("refuses another account every way into a session's runs", async () => {
  const { sessionId, run } = await runReadingStdin(t.mine, 'echo secret-output; read x; echo "$x"');
  await run.until('secret-output');
  const lastId = run.events().at(-1)?.id ?? '';
  const [proc] = (await t.mine.get<Listed>(`/v1/sessions/${sessionId}/processes`)).body.processes;
  const base = `/v1/sessions/${sessionId}/processes`;

  for (const path of [base, `${base}/${proc?.pid}`, `${base}/${proc?.id}/output`]) {
    const answer = await t.theirs.get(path);
    expect([path, answer.status]).toEqual([path, 404]);
    expect(answer.body).toMatchObject({ error: { code: 'session_not_found' } });
    expect(answer.text).not.toContain('secret-output');
  }
  const followed = await t.theirs.outputStream(sessionId, proc?.pid ?? 0);
  expect(followed.status).toBe(404);
  const written = await t.theirs.post(`${base}/${proc?.pid}/stdin`, { data: 'injected\n' });
  expect(written.status).toBe(404);
  // Resuming the owner's stream: with the stranger's key, on the owner's session or their own.
  const resumed = await t.theirs.executeStream(sessionId, {}, undefined, {
    'last-event-id': lastId,
  });
  expect(resumed.status).toBe(404);
  expect(await resumed.text()).not.toContain('secret-output');
  const own = await t.theirs.createSession();
  const elsewhere = await t.theirs.executeStream(own, {}, undefined, { 'last-event-id': lastId });
  expect(elsewhere.status).toBe(404);
  expect(await elsewhere.json()).toMatchObject({ error: { code: 'process_not_found' } });
  const byId = await t.theirs.get(`/v1/sessions/${own}/processes/${proc?.id}/output`);
  expect(byId.status).toBe(404);
  expect(byId.body).toMatchObject({ error: { code: 'process_not_found' } });

  // None of that reached the run: the owner's input is the only one it read.
  await t.mine.post(`${base}/${proc?.pid}/stdin`, { data: 'owner\n', close: true });
  const events = parseEvents(await run.rest());
  const stdout = events.filter((e) => e.event === 'stdout').map((e) => String(e.data['data']));
  expect(stdout.join('')).toBe('secret-output\nowner\n');
});

it('needs the processes scope, and refuses malformed and oversized input', async () => {
  const sessionId = await t.mine.createSession();
  await t.mine.execute(sessionId, { command: 'echo x' });
  const base = `/v1/sessions/${sessionId}/processes`;
  const filesOnly = t.as((await createAccount(t.stack, 'paid', { scopes: ['files'] })).key);
  expect((await filesOnly.get(base)).status).toBe(403);

  for (const bad of ['..', '-1', 'proc_../../x', '1e3', 'proc_ZZ']) {
    const answer = await t.mine.get(`${base}/${encodeURIComponent(bad)}/output`);
    expect([bad, answer.status]).toEqual([bad, expect.any(Number)]);
    expect(answer.status === 400 || answer.status === 404).toBe(true);
  }
  const [proc] = (await t.mine.get<Listed>(base)).body.processes;
  const tooBig = await t.mine.post(`${base}/${proc?.pid}/stdin`, {
    data: Buffer.alloc(1024 * 1024 + 1).toString('base64'),
    encoding: 'base64',
  });
  expect(tooBig.status).toBe(413);
  const forgedId = await t.mine.executeStream(sessionId, {}, undefined, {
    'last-event-id': `${proc?.id}:-5:0`,
  });
  expect(forgedId.status).toBe(400);
  const notStreamed = await t.mine.post(
    '/v1/execute',
    { sessionId },
    { 'last-event-id': `${proc?.id}:0:0` },
  );
  expect(notStreamed.status).toBe(400);
});

it("removes a deleted session's logs from the node", async () => {
  const sessionId = await t.mine.createSession();
  await t.mine.execute(sessionId, { command: 'echo gone-with-session' });
  const [proc] = (await t.mine.get<Listed>(`/v1/sessions/${sessionId}/processes`)).body.processes;
  const logs = `${t.stack.agentConfig.workspaceDir}/.logs/${sessionId}`;
  // Its output, its meta a record of the same file.
  const files = readdirSync(logs).filter((name) => name.startsWith(`${proc?.id}.`));
  expect(files).toEqual([`${proc?.id}.0.log`]);
  expect((await t.mine.deleteSession(sessionId)).status).toBe(200);
  expect(existsSync(logs)).toBe(false);
  // Its file stays on as an empty spare for the node's next logs (another account's too):
  // no byte of its output is left anywhere under the node's logs, nor reaches t.theirs.
  const root = `${t.stack.agentConfig.workspaceDir}/.logs`;
  const holding = () =>
    readdirSync(root, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => join(entry.parentPath, entry.name))
      .filter((path) => readFileSync(path).includes('gone-with-session'));
  expect(holding()).toEqual([]);
  const theirSession = await t.theirs.createSession();
  const ran = await t.theirs.execute(theirSession, { command: 'echo theirs' });
  expect(ran.body).toMatchObject({ stdout: 'theirs\n' });
  const listed = await t.theirs.get<Listed>(`/v1/sessions/${theirSession}/processes`);
  const output = await t.theirs.get(
    `/v1/sessions/${theirSession}/processes/${listed.body.processes[0]?.id}/output`,
  );
  expect(output.text).toContain('theirs');
  expect(output.text).not.toContain('gone-with-session');
  expect(holding()).toEqual([]);
});
