import { ApiClient } from '../support/api-client';
import { createAccount } from '../support/api';
import { untilDeepSleep } from '../support/deep-sleep';
import { docker } from '../support/stack';
import { useStack } from '../support/use-stack';

/**
 * Code contexts (ADR 42) and shell contexts (ADR 59) through idle and deep sleep: idle keeps a context (its process is
 * paused with the sandbox); a deep sleep loses it, and says so (`context_lost`) until it is
 * restarted under the same id.
 */

const t = useStack({
  gatewayEnv: {
    SESSION_IDLE_AFTER_S: '1',
    SESSION_DEEP_SLEEP_AFTER_S: '6',
    SESSION_SWEEP_INTERVAL_S: '3600',
  },
});

interface Cell {
  exitCode: number;
  results?: Array<Record<string, unknown>>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function untilState(api: ApiClient, sessionId: string, state: string): Promise<void> {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(100)) {
    if ((await api.session<{ state: string }>(sessionId)).body.state === state) return;
  }
  throw new Error(`${sessionId} did not become ${state} within 30 s`);
}

it('keeps a context through idle, and answers context_lost after a deep sleep until restarted or deleted', async () => {
  const { key } = await createAccount(t.stack, 'paid');
  const api = new ApiClient(t.stack, key);
  const sessionId = await api.createSession();
  const created = await api.post<{ contextId: string }>(`/v1/sessions/${sessionId}/contexts`, {
    language: 'javascript',
  });
  expect(created.status).toBe(201);
  const { contextId } = created.body;
  const cell = (code: string, id = contextId) =>
    api.execute<Cell>(sessionId, { contextId: id, code });
  await cell('var kept = 41;');
  const other = (await api.post<{ contextId: string }>(`/v1/sessions/${sessionId}/contexts`, {}))
    .body.contextId;
  // A shell context (ADR 59) goes the same way, and comes back a shell.
  const shell = (
    await api.post<{ contextId: string }>(`/v1/sessions/${sessionId}/contexts`, {
      language: 'bash',
    })
  ).body.contextId;
  const command = (text: string) =>
    api.execute<Cell & { stdout: string }>(sessionId, { contextId: shell, command: text });
  await command('cd /tmp');

  await untilState(api, sessionId, 'idle');
  const afterIdle = await cell('kept + 1');
  expect(afterIdle.body.results?.[0]?.['text/plain']).toBe('42');
  expect((await command('pwd')).body.stdout).toBe('/tmp\n');

  await untilDeepSleep(api, sessionId);
  // The state says deep-sleep as the node starts on it: its container goes last.
  const containers = () => docker.listContainers({ all: true, filters: { name: [sessionId] } });
  for (let i = 0; i < 100 && (await containers()).length > 0; i += 1) await sleep(100);
  expect(await containers()).toEqual([]);
  const lost = await cell('kept');
  expect(lost.status).toBe(409);
  expect(lost.body).toMatchObject({ error: { code: 'context_lost' } });
  const again = await cell('kept');
  expect(again.status).toBe(409);

  const restarted = await api.post<{ contextId: string; language: string }>(
    `/v1/sessions/${sessionId}/contexts/${contextId}/restart`,
  );
  expect(restarted.status).toBe(200);
  expect(restarted.body).toMatchObject({ contextId, language: 'javascript' });
  const fresh = await cell('typeof kept');
  expect(fresh.body.results?.[0]?.['text/plain']).toBe("'undefined'");
  expect((await command('pwd')).body).toMatchObject({ error: { code: 'context_lost' } });
  const shellAgain = await api.post(`/v1/sessions/${sessionId}/contexts/${shell}/restart`);
  expect(shellAgain.body).toMatchObject({ contextId: shell, language: 'bash' });
  expect((await command('pwd')).body.stdout).toBe('/workspace\n');

  // A lost context can be deleted too; then it is gone for good.
  expect((await cell('1', other)).body).toMatchObject({ error: { code: 'context_lost' } });
  expect((await api.delete(`/v1/sessions/${sessionId}/contexts/${other}`)).status).toBe(200);
  const deleted = await cell('1', other);
  expect(deleted.status).toBe(404);
  expect(deleted.body).toMatchObject({ error: { code: 'context_not_found' } });
});
