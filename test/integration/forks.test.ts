import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createAccount } from '../support/api';
import type { ApiClient } from '../support/api-client';
import { previewRequest } from '../support/preview-app';
import { sessionContainerNow, testWorkspaceDir } from '../support/stack';
import { useStack } from '../support/use-stack';

/**
 * Forks of a running session (ADR 43): files copied on write, each fork its own session with
 * its own disk, network and preview; all or none within the concurrent-session limit.
 */
const t = useStack({ edge: true });
let api: ApiClient;
let source: string;

interface Forked {
  sessions: { sessionId: string; previewUrl: string; expiresAt: string }[];
  processesKept: boolean;
}

const fork = (body: unknown, id = source) => api.post<Forked>(`/v1/sessions/${id}/fork`, body);
const sh = async (sessionId: string, command: string): Promise<string> => {
  const run = await api.execute<{ exitCode: number; stdout: string; stderr: string }>(sessionId, {
    command,
  });
  expect(run.body).toMatchObject({ exitCode: 0 });
  return run.body.stdout;
};
const label = (id: string): string => id.replace('_', '-');
const preview = (id: string) =>
  previewRequest(t.stack.edge?.url ?? '', `${label(id)}.preview.test`, '/');
/** Where the node keeps disks: mounts in the workspace directory, images in its XFS store. */
const disksDir = () => testWorkspaceDir(t.stack.nodeId);
const mounted = (id: string) =>
  readFileSync('/proc/self/mounts', 'utf8').includes(` ${join(disksDir(), id)} `);
const hasImage = (id: string) =>
  [join(disksDir(), '.disks', `${id}.ext4`), join(disksDir(), `${id}.ext4`)].some((path) =>
    existsSync(path),
  );
/** Loop devices whose backing file is one of the session's images. */
const loopsOf = (id: string) =>
  readdirSync('/sys/block')
    .filter((name) => name.startsWith('loop'))
    .filter((name) => {
      const file = `/sys/block/${name}/loop/backing_file`;
      return existsSync(file) && readFileSync(file, 'utf8').includes(`${id}.ext4`);
    });
const serve = (answer: string) =>
  `nohup node -e "require('http').createServer((q, s) => s.end('${answer}')).listen(3000)" >/dev/null 2>&1 & for i in $(seq 150); do (exec 3<>/dev/tcp/127.0.0.1/3000) 2>/dev/null && break; sleep 0.1; done`;

beforeAll(async () => {
  const account = await createAccount(t.stack, 'enterprise', {
    limits: { maxConcurrentSessions: 4 },
  });
  api = t.as(account.key);
  source = await api.createSession({ metadata: { team: 'forks' } });
  await sh(
    source,
    'echo source > a.txt && head -c 20M /dev/urandom > big && sha256sum big > big.sum',
  );
});

it('gives each fork the source files, its own writes, its own server and preview', async () => {
  const forked = await fork({});
  expect(forked.status).toBe(201);
  expect(forked.body.processesKept).toBe(false);
  const [copy] = forked.body.sessions;
  // Answered once its disk was cloned and it was recorded: its sandbox starts after (ADR 43),
  // and the first request below waits for it.
  expect((await sessionContainerNow(copy?.sessionId ?? ''))?.State).not.toBe('running');
  expect(copy?.sessionId).not.toBe(source);
  expect(copy?.previewUrl).toContain(label(copy?.sessionId ?? ''));
  const id = copy?.sessionId ?? '';
  expect((await api.session(id)).body).toMatchObject({ metadata: { team: 'forks' } });
  // Copy-on-write: the image is in the node's XFS store, sharing the source's blocks.
  expect(existsSync(join(disksDir(), '.disks', `${id}.ext4`))).toBe(true);
  expect(await sh(id, 'cat a.txt && sha256sum -c big.sum')).toBe('source\nbig: OK\n');

  await sh(id, 'echo fork > a.txt && echo only-fork > f.txt');
  await sh(source, 'echo only-source > s.txt');
  expect(await sh(source, 'cat a.txt; ls')).toBe('source\na.txt\nbig\nbig.sum\ns.txt\n');
  expect(await sh(id, 'cat a.txt; ls')).toBe('fork\na.txt\nbig\nbig.sum\nf.txt\n');

  await sh(source, serve('from source'));
  await sh(id, serve('from fork'));
  expect(await preview(source)).toMatchObject({ status: 200, body: 'from source' });
  expect(await preview(id)).toMatchObject({ status: 200, body: 'from fork' });
  expect((await api.deleteSession(id)).status).toBe(200);
});

it('forks during a running execute: the run goes on, the fork has what was written', async () => {
  const run = sh(source, 'for i in $(seq 40); do echo $i >> count.log; sleep 0.05; done');
  await new Promise((resolve) => setTimeout(resolve, 700));
  const forked = await fork({ count: 2 });
  expect(forked.status).toBe(201);
  await run;
  expect((await sh(source, 'wc -l < count.log')).trim()).toBe('40');
  for (const { sessionId } of forked.body.sessions) {
    const lines = (await sh(sessionId, 'cat count.log')).trim().split('\n').map(Number);
    // A consistent copy of a moment: 1..n in order, some lines in, never a torn one.
    expect(lines.length).toBeGreaterThan(0);
    expect(lines).toEqual(lines.map((_, i) => i + 1));
    expect((await api.deleteSession(sessionId)).status).toBe(200);
  }
});

it('refuses forks past the concurrent-session limit with 429, making none', async () => {
  const before = await api.get<{ data: unknown[] }>('/v1/sessions');
  const refused = await fork({ count: 4 });
  expect(refused.status).toBe(429);
  expect(refused.body).toMatchObject({
    error: { code: 'session_limit_exceeded', details: { limit: 4 } },
  });
  const after = await api.get<{ data: unknown[] }>('/v1/sessions');
  expect(after.body.data.length).toBe(before.body.data.length);
});

it('answers bad bodies with 400 invalid_request', async () => {
  for (const body of [{ count: 0 }, { count: 11 }, { count: '2' }, { processes: 1 }, { x: 1 }]) {
    const refused = await fork(body);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: { code: 'invalid_request' } });
  }
  expect((await fork({}, `ses_${'0'.repeat(24)}`)).status).toBe(404);
});

it('removes a fork deleted while its sandbox still starts, leaving nothing behind', async () => {
  const forked = await fork({});
  expect(forked.status).toBe(201);
  const id = forked.body.sessions[0]?.sessionId ?? '';
  expect((await api.deleteSession(id)).status).toBe(200);
  expect(await sessionContainerNow(id)).toBeUndefined();
  expect(mounted(id) || hasImage(id)).toBe(false);
  expect(loopsOf(id)).toEqual([]);
  expect((await api.session(id)).status).toBe(404);
});

it('keeps a fork whole when its source is deleted, and leaves no disk behind', async () => {
  const forked = await fork({});
  const id = forked.body.sessions[0]?.sessionId ?? '';
  expect((await api.deleteSession(source)).status).toBe(200);
  expect(mounted(source) || hasImage(source)).toBe(false);
  expect(await sh(id, 'sha256sum -c big.sum')).toBe('big: OK\n');
  expect((await api.deleteSession(id)).status).toBe(200);
  expect(mounted(id) || hasImage(id)).toBe(false);
});
