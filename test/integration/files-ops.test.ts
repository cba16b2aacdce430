import {
  DirectoryNotEmptyError,
  FileExistsError,
  FileNotFoundError,
  InvalidPathError,
  Sandbox,
} from '@sandbox/sdk';
import { MANUAL_SWEEPS } from '../support/stack';
import { useStackWithAccount } from '../support/use-stack';

/**
 * stat, remove, rename and mkdir (issue 42) against the real stack: each endpoint, its
 * errors, paths that leave /workspace by `..` or by a symlink a run made, sleeping sessions
 * woken, and the SDK's methods.
 */
const t = useStackWithAccount('free', {
  session: true,
  stack: {
    gatewayEnv: { SESSION_IDLE_AFTER_S: '1', SESSION_DEEP_SLEEP_AFTER_S: '2', ...MANUAL_SWEEPS },
  },
});

interface Stat {
  path: string;
  type: string;
  size: number;
  modified: string;
  mode: number;
}
interface ErrorBody {
  error: { code: string; details?: Record<string, unknown> };
}

const q = encodeURIComponent;
const stat = (path: string, sessionId = t.sessionId) =>
  t.api.get<Stat & ErrorBody>(`/v1/files/stat?sessionId=${sessionId}&path=${q(path)}`);
const remove = (path: string, recursive?: boolean) =>
  t.api.post<{ removed: true; path: string } & ErrorBody>('/v1/files/remove', {
    sessionId: t.sessionId,
    path,
    ...(recursive === undefined ? {} : { recursive }),
  });
const rename = (from: string, to: string, overwrite?: boolean) =>
  t.api.post<{ from: string; to: string } & ErrorBody>('/v1/files/rename', {
    sessionId: t.sessionId,
    from,
    to,
    ...(overwrite === undefined ? {} : { overwrite }),
  });
const mkdir = (path: string) =>
  t.api.post<{ path: string; created: boolean } & ErrorBody>('/v1/files/mkdir', {
    sessionId: t.sessionId,
    path,
  });
const sh = async (command: string, sessionId = t.sessionId): Promise<string> => {
  const ran = await t.api.execute<{ stdout: string; exitCode: number }>(sessionId, { command });
  expect(ran.status).toBe(200);
  return ran.body.stdout;
};
const read = async (path: string) => (await t.api.readFile(t.sessionId, path)).text();

describe('GET /v1/files/stat', () => {
  it('describes a file, a directory, a symlink (not followed) and the workspace', async () => {
    await sh(
      'mkdir -p st/dir && printf hello > st/f.txt && chmod 640 st/f.txt && ln -s /etc st/etc-link',
    );
    const before = Date.now();
    const file = await stat('./st/dir/../f.txt');
    expect(file.status).toBe(200);
    expect(file.body).toEqual({
      path: 'st/f.txt',
      type: 'file',
      size: 5,
      modified: expect.any(String) as string,
      mode: 0o640,
    });
    expect(Math.abs(Date.parse(file.body.modified) - before)).toBeLessThan(60_000);
    expect((await stat('st/dir')).body).toMatchObject({ path: 'st/dir', type: 'directory' });
    expect((await stat('st/etc-link')).body).toMatchObject({
      type: 'symlink',
      size: '/etc'.length,
    });
    expect((await stat('.')).body).toMatchObject({ path: '', type: 'directory' });
  });

  it('answers 404 file_not_found for nothing there, 400 invalid_path for paths that leave', async () => {
    const missing = await stat('st/none.txt');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ code: 'file_not_found' });
    await sh('mkdir -p st && ln -sfn /etc st/out');
    for (const path of ['../etc/passwd', '/etc/passwd', 'st/../../etc', 'st/out/passwd', 'a\0b']) {
      const refused = await stat(path);
      expect([path, refused.status, refused.body.error.code]).toEqual([path, 400, 'invalid_path']);
    }
    const noPath = await t.api.get<ErrorBody>(`/v1/files/stat?sessionId=${t.sessionId}`);
    expect(noPath.status).toBe(400);
    expect(noPath.body.error.code).toBe('invalid_request');
  });
});

describe('POST /v1/files/mkdir', () => {
  it('makes a directory with its parents, idempotently', async () => {
    const made = await mkdir('mk/a/b/c');
    expect(made.status).toBe(200);
    expect(made.body).toEqual({ path: 'mk/a/b/c', created: true });
    expect(await sh('test -d mk/a/b/c && stat -c %U mk/a/b/c')).toBe('sandbox\n');
    expect((await mkdir('mk/a/b/c/')).body).toEqual({ path: 'mk/a/b/c', created: false });
    expect((await mkdir('.')).body).toEqual({ path: '', created: false });
  });

  it('refuses a file in the way and a symlink that leads out, making nothing outside', async () => {
    await sh('mkdir -p mk /tmp/outside && printf x > mk/file && ln -sfn /tmp/outside mk/out');
    for (const path of ['mk/file', 'mk/file/sub', 'mk/out/made', '../made']) {
      const refused = await mkdir(path);
      expect([path, refused.status, refused.body.error.code]).toEqual([path, 400, 'invalid_path']);
    }
    expect(await sh('test -e /tmp/outside/made && echo made || echo none')).toBe('none\n');
  });
});

describe('POST /v1/files/remove', () => {
  it('removes a file and an empty directory; a non-empty one only with recursive', async () => {
    await sh('mkdir -p rm/empty rm/full/deep && printf x > rm/f && printf y > rm/full/deep/g');
    expect((await remove('rm/f')).body).toEqual({ removed: true, path: 'rm/f' });
    expect((await remove('rm/empty/')).body).toEqual({ removed: true, path: 'rm/empty' });
    const notEmpty = await remove('rm/full');
    expect(notEmpty.status).toBe(409);
    expect(notEmpty.body.error).toMatchObject({
      code: 'directory_not_empty',
      details: { path: 'rm/full' },
    });
    expect(await sh('cat rm/full/deep/g')).toBe('y');
    expect((await remove('rm/full', true)).status).toBe(200);
    expect(await sh('ls -A rm')).toBe('');
    const gone = await remove('rm/f');
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe('file_not_found');
  });

  it('never removes /workspace itself', async () => {
    await sh('printf keep > keep.txt');
    for (const path of ['.', './', 'rm/..']) {
      const refused = await remove(path, true);
      expect([path, refused.status, refused.body.error.code]).toEqual([path, 400, 'invalid_path']);
    }
    expect(await read('keep.txt')).toBe('keep');
  });

  it('removes a symlink to /etc itself, never through it or what it points to', async () => {
    await sh(
      'mkdir -p /tmp/victim && printf v > /tmp/victim/v && ln -sfn /tmp/victim rm-out && ln -sfn /etc rm-etc',
    );
    const through = await remove('rm-out/v');
    expect(through.status).toBe(400);
    expect(through.body.error.code).toBe('invalid_path');
    expect((await remove('rm-out/', true)).status).toBe(200); // the link, named with a slash
    expect((await remove('rm-etc', true)).status).toBe(200);
    expect(await sh('cat /tmp/victim/v; test -f /etc/passwd && echo etc')).toBe('vetc\n');
    expect(await sh('test -e rm-out || test -e rm-etc || echo links-gone')).toBe('links-gone\n');
  });
});

describe('POST /v1/files/rename', () => {
  it('moves a file, making the destination parents, and a directory with what it holds', async () => {
    await sh('mkdir -p mv/dir && printf one > mv/one && printf in > mv/dir/in');
    const moved = await rename('mv/one', 'mv/new/deep/one.txt');
    expect(moved.status).toBe(200);
    expect(moved.body).toEqual({ from: 'mv/one', to: 'mv/new/deep/one.txt' });
    expect(await read('mv/new/deep/one.txt')).toBe('one');
    expect((await stat('mv/one')).status).toBe(404);
    expect((await rename('mv/dir', 'mv/dir2')).status).toBe(200);
    expect(await read('mv/dir2/in')).toBe('in');
  });

  it('refuses an existing destination (409 file_exists) unless overwrite', async () => {
    await sh(
      'mkdir -p mv && printf a > mv/a && printf b > mv/b && mkdir -p mv/full && printf x > mv/full/x',
    );
    const exists = await rename('mv/a', 'mv/b');
    expect(exists.status).toBe(409);
    expect(exists.body.error).toMatchObject({ code: 'file_exists', details: { path: 'mv/b' } });
    expect(await read('mv/b')).toBe('b');
    expect((await rename('mv/a', 'mv/b', true)).status).toBe(200);
    expect(await read('mv/b')).toBe('a');
    const full = await rename('mv/b', 'mv/full', true);
    expect(full.status).toBe(400); // a file over a directory
    const missing = await rename('mv/none', 'mv/c');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ code: 'file_not_found' });
  });

  it('never moves anything out of /workspace, or in from outside, by .. or a symlink', async () => {
    await sh('mkdir -p mv && printf s > mv/stay && mkdir -p /tmp/o && printf o > /tmp/o/secret');
    await sh('ln -sfn /tmp/o mv/out');
    for (const [from, to] of [
      ['mv/stay', '../stolen'],
      ['mv/stay', '/tmp/stolen'],
      ['mv/stay', 'mv/out/stolen'],
      ['mv/out/secret', 'mine'],
      ['.', 'x'],
      ['mv/stay', '.'],
    ] as const) {
      const refused = await rename(from, to);
      expect([from, to, refused.status, refused.body.error.code]).toEqual([
        from,
        to,
        400,
        'invalid_path',
      ]);
    }
    expect(await read('mv/stay')).toBe('s');
    expect(await sh('ls /tmp/o; test -e /tmp/stolen || echo none')).toBe('secret\nnone\n');
    // The link itself moves (what it points to stays where it is).
    expect((await rename('mv/out', 'mv/out-link')).status).toBe(200);
    expect((await stat('mv/out-link')).body.type).toBe('symlink');
    expect(await sh('cat /tmp/o/secret')).toBe('o');
  });
});

describe('sessions asleep', () => {
  const sweep = () => t.stack.gateways[0]!.sweeper.sweep();
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const state = async (id: string) => (await t.api.session<{ state: string }>(id)).body.state;

  it('wakes an idle and a deep-sleeping session, as a read or write does', async () => {
    const id = await t.api.createSession();
    await t.api.writeFile(id, 'w/kept.txt', 'kept');
    await sleep(1200);
    await sweep();
    expect(await state(id)).toBe('idle');
    expect((await stat('w/kept.txt', id)).body).toMatchObject({ type: 'file', size: 4 });
    expect(await state(id)).toBe('active');
    await sleep(2200);
    expect((await sweep()).slept).toContain(id);
    expect(await state(id)).toBe('deep-sleep');
    const made = await t.api.post<{ created: boolean }>('/v1/files/mkdir', {
      sessionId: id,
      path: 'w/new',
    });
    expect(made.body).toEqual({ path: 'w/new', created: true });
    expect(await state(id)).toBe('active');
    expect(await sh('cat w/kept.txt; test -d w/new && echo dir', id)).toBe('keptdir\n');
  });
});

describe('the SDK', () => {
  it('stat, exists, mkdir, rename and remove, with their errors as classes', async () => {
    const sandbox = await Sandbox.connect(t.sessionId, {
      apiKey: t.account.key,
      apiUrl: `${t.stack.url}/v1`,
    });
    const { files } = sandbox;
    await expect(files.mkdir('sdk/a/b')).resolves.toEqual({ path: 'sdk/a/b', created: true });
    await expect(files.mkdir('sdk/a/b')).resolves.toEqual({ path: 'sdk/a/b', created: false });
    await files.write('sdk/a/b/f.txt', 'hi');
    await expect(files.stat('sdk/a/b/f.txt')).resolves.toMatchObject({ type: 'file', size: 2 });
    await expect(files.exists('sdk/a/b/f.txt')).resolves.toBe(true);
    await expect(files.exists('sdk/nothing')).resolves.toBe(false);
    await expect(files.exists('../etc/passwd')).rejects.toBeInstanceOf(InvalidPathError);
    await files.write('sdk/g.txt', 'g');
    await expect(files.rename('sdk/g.txt', 'sdk/a/b/f.txt')).rejects.toBeInstanceOf(
      FileExistsError,
    );
    await expect(files.rename('sdk/g.txt', 'sdk/moved.txt')).resolves.toEqual({
      from: 'sdk/g.txt',
      to: 'sdk/moved.txt',
    });
    await expect(files.readText('sdk/moved.txt')).resolves.toBe('g');
    await expect(files.remove('sdk/a')).rejects.toBeInstanceOf(DirectoryNotEmptyError);
    await expect(files.remove('sdk/a', { recursive: true })).resolves.toEqual({
      removed: true,
      path: 'sdk/a',
    });
    await expect(files.stat('sdk/a')).rejects.toBeInstanceOf(FileNotFoundError);
    await expect(files.exists('sdk/a')).resolves.toBe(false);
  });
});
