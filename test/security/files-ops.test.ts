import { createAccount } from '../support/api';
import type { ApiClient } from '../support/api-client';
import { useStack } from '../support/use-stack';

/**
 * stat, remove, rename and mkdir (issue 42) against another account and against abuse: a
 * stranger's key gets the same 404 as for a missing session and changes nothing; a key without
 * the files scope gets 403; symlinks a run made never let the calls act outside /workspace,
 * nor remove /workspace itself.
 */
const t = useStack();
let mine: ApiClient;
let theirs: ApiClient;
let sessionId: string;

beforeAll(async () => {
  mine = t.as((await createAccount(t.stack, 'paid')).key);
  theirs = t.as((await createAccount(t.stack, 'paid')).key);
  sessionId = await mine.createSession();
});

interface ErrorBody {
  error: { code: string };
}

const sh = async (command: string): Promise<string> =>
  (await mine.execute<{ stdout: string }>(sessionId, { command })).body.stdout;

/** One request of each new endpoint on `session`, as `api` sends it. */
function calls(api: ApiClient, session: string) {
  return {
    stat: (path: string) =>
      api.get<ErrorBody>(`/v1/files/stat?sessionId=${session}&path=${encodeURIComponent(path)}`),
    remove: (path: string) =>
      api.post<ErrorBody>('/v1/files/remove', { sessionId: session, path, recursive: true }),
    rename: (from: string, to: string) =>
      api.post<ErrorBody>('/v1/files/rename', { sessionId: session, from, to, overwrite: true }),
    mkdir: (path: string) => api.post<ErrorBody>('/v1/files/mkdir', { sessionId: session, path }),
  };
}

it('answers another account 404 session_not_found, as for a missing session, and changes nothing', async () => {
  await sh('mkdir -p secret/dir && printf s > secret/file');
  const missing = `ses_${'0'.repeat(24)}`;
  for (const session of [sessionId, missing]) {
    const stranger = calls(theirs, session);
    for (const answer of await Promise.all([
      stranger.stat('secret/file'),
      stranger.remove('secret'),
      stranger.rename('secret/file', 'taken'),
      stranger.mkdir('planted'),
    ])) {
      expect(answer.status).toBe(404);
      expect(answer.body.error.code).toBe('session_not_found');
      expect(answer.text).not.toContain('secret/file');
    }
  }
  expect(await sh('cat secret/file; test -e taken || test -e planted || echo untouched')).toBe(
    'suntouched\n',
  );
});

it('needs the files scope', async () => {
  const executeOnly = t.as(
    (await createAccount(t.stack, 'paid', { scopes: ['sessions', 'execute'] })).key,
  );
  const own = await executeOnly.createSession();
  const refused = calls(executeOnly, own);
  for (const answer of [
    await refused.stat('x'),
    await refused.remove('x'),
    await refused.rename('x', 'y'),
    await refused.mkdir('x'),
  ]) {
    expect(answer.status).toBe(403);
    expect(answer.body.error.code).toBe('forbidden');
  }
});

it('never acts outside /workspace through a symlink a run made, nor on /workspace itself', async () => {
  // What the sandbox user may write outside the workspace, and links to it and to /etc.
  await sh(
    'mkdir -p /tmp/victim/dir && printf v > /tmp/victim/file && printf d > /tmp/victim/dir/d && ' +
      'ln -sfn /tmp/victim victim && ln -sfn /etc etc && ln -sfn / root && ln -sfn . self && printf k > keep',
  );
  const own = calls(mine, sessionId);
  const refusals = [
    await own.stat('victim/file'),
    await own.stat('etc/passwd'),
    await own.remove('victim/dir'),
    await own.remove('victim/file'),
    await own.remove('etc/hostname'),
    await own.remove('.'),
    await own.remove('self/..'),
    await own.remove('../workspace'),
    await own.rename('keep', 'victim/stolen'),
    await own.rename('keep', '../tmp/stolen'),
    await own.rename('victim/file', 'mine'),
    await own.rename('victim/dir', 'mine'),
    await own.rename('.', 'elsewhere'),
    await own.mkdir('victim/planted'),
    await own.mkdir('root/tmp/planted'),
  ];
  for (const answer of refusals) {
    expect([answer.status, answer.body.error.code]).toEqual([400, 'invalid_path']);
  }
  expect(
    await sh(
      'cat /tmp/victim/file /tmp/victim/dir/d keep; ls /tmp/victim; test -f /etc/hostname && echo etc',
    ),
  ).toBe('vdkdir\nfile\netc\n');
  // A link out and back in is followed: the entry is inside.
  expect((await own.stat('root/workspace/keep')).status).toBe(200);
  // The links themselves are the sandbox's own: removed as links, their targets left.
  for (const link of ['victim', 'etc', 'root', 'self']) {
    expect((await own.remove(link)).status).toBe(200);
  }
  expect(await sh('ls /tmp/victim; test -f /etc/passwd && echo etc; cat keep')).toBe(
    'dir\nfile\netc\nk',
  );
});

describe('snapshots apart (ADR 44)', () => {
  it('answers another account 404 on every snapshot route and on a create from its snapshot', async () => {
    await sh('printf snapshot-secret > snap-secret.txt');
    const taken = await mine.post<{ snapshotId: string }>(
      `/v1/sessions/${sessionId}/snapshots`,
      {},
    );
    expect(taken.status).toBe(201);
    const { snapshotId } = taken.body;
    const answers = await Promise.all([
      theirs.post<ErrorBody>(`/v1/sessions/${sessionId}/snapshots`, {}),
      theirs.get<ErrorBody>(`/v1/snapshots/${snapshotId}`),
      theirs.delete<ErrorBody>(`/v1/snapshots/${snapshotId}`),
      theirs.post<ErrorBody>('/v1/sessions/create', { snapshotId }),
    ]);
    expect(answers.map((answer) => [answer.status, answer.body.error.code])).toEqual([
      [404, 'session_not_found'],
      [404, 'snapshot_not_found'],
      [404, 'snapshot_not_found'],
      [404, 'snapshot_not_found'],
    ]);
    for (const answer of answers) expect(answer.text).not.toContain('snapshot-secret');
    const listed = await theirs.get<{ data: unknown[] }>('/v1/snapshots');
    expect(listed.body.data).toEqual([]);
    // Still the owner's, whole.
    const copy = await mine.createSession({ snapshotId });
    const read = await mine.execute<{ stdout: string }>(copy, { command: 'cat snap-secret.txt' });
    expect(read.body.stdout).toBe('snapshot-secret');
    expect((await mine.delete(`/v1/snapshots/${snapshotId}`)).status).toBe(200);
  });

  it('refuses malformed snapshot ids and bodies without touching anything', async () => {
    for (const id of [
      '../etc/passwd',
      'snap_UPPER0000000000000000000',
      `ses_${'0'.repeat(24)}`,
      'snap_' + 'a'.repeat(200),
    ]) {
      const got = await mine.get<ErrorBody>(`/v1/snapshots/${encodeURIComponent(id)}`);
      expect(got.status).toBe(404);
      const created = await mine.post<ErrorBody>('/v1/sessions/create', { snapshotId: id });
      expect([400, 404]).toContain(created.status);
    }
    for (const body of [
      { name: '' },
      { name: 'x'.repeat(201) },
      { processes: 'yes' },
      { extra: 1 },
    ]) {
      const refused = await mine.post<ErrorBody>(`/v1/sessions/${sessionId}/snapshots`, body);
      expect(refused.status).toBe(400);
      expect(refused.body.error.code).toBe('invalid_request');
    }
    expect((await mine.get<{ data: unknown[] }>('/v1/snapshots')).body.data).toEqual([]);
  });
});
