import {
  DirectoryNotEmptyError,
  FileExistsError,
  InvalidPathError,
  Sandbox,
  SessionNotFoundError,
} from '../src';
import { apiError, caught, clientOf, json, sessionInfo, type Call } from './fake-api';

async function sandboxOn(route: (call: Call) => Response) {
  const api = clientOf(
    (call) => (call.path.startsWith('/files/') ? route(call) : json(sessionInfo())),
    {
      maxRetries: 0,
    },
  );
  return { sandbox: await Sandbox.connect('ses_abc', api.options), calls: api.calls };
}

const STAT = {
  path: 'a.txt',
  type: 'file',
  size: 3,
  modified: '2026-11-28T08:00:00.000Z',
  mode: 420,
};

describe('files: stat, exists, remove, rename, mkdir', () => {
  it('sends each call to its endpoint with its options', async () => {
    const { sandbox, calls } = await sandboxOn((call) => {
      switch (call.path) {
        case '/files/stat':
          return json(STAT);
        case '/files/remove':
          return json({ removed: true, path: 'd' });
        case '/files/rename':
          return json({ from: 'a', to: 'b' });
        default:
          return json({ path: 'x/y', created: true });
      }
    });
    await expect(sandbox.files.stat('a.txt')).resolves.toEqual(STAT);
    await sandbox.files.remove('d', { recursive: true });
    await sandbox.files.rename('a', 'b', { overwrite: true });
    await expect(sandbox.files.mkdir('x/y')).resolves.toEqual({ path: 'x/y', created: true });
    await sandbox.files.remove('f');
    const sent = calls.filter((c) => c.path.startsWith('/files/'));
    expect(sent.map((c) => `${c.method} ${c.path}`)).toEqual([
      'GET /files/stat',
      'POST /files/remove',
      'POST /files/rename',
      'POST /files/mkdir',
      'POST /files/remove',
    ]);
    expect(sent[0]?.query.get('path')).toBe('a.txt');
    expect(sent[0]?.query.get('sessionId')).toBe('ses_abc');
    expect(sent[1]?.body).toEqual({ sessionId: 'ses_abc', path: 'd', recursive: true });
    expect(sent[2]?.body).toEqual({ sessionId: 'ses_abc', from: 'a', to: 'b', overwrite: true });
    expect(sent[3]?.body).toEqual({ sessionId: 'ses_abc', path: 'x/y' });
    expect(sent[4]?.body).toEqual({ sessionId: 'ses_abc', path: 'f', recursive: false });
  });

  it('exists: true when stat finds the entry, false on file_not_found, throws the rest', async () => {
    const { sandbox } = await sandboxOn((call) => {
      const path = call.query.get('path');
      if (path === 'here') return json(STAT);
      if (path === 'gone') return apiError(404, 'file_not_found');
      if (path === '../x') return apiError(400, 'invalid_path');
      return apiError(404, 'session_not_found');
    });
    await expect(sandbox.files.exists('here')).resolves.toBe(true);
    await expect(sandbox.files.exists('gone')).resolves.toBe(false);
    expect(await caught(sandbox.files.exists('../x'))).toBeInstanceOf(InvalidPathError);
    expect(await caught(sandbox.files.exists('other'))).toBeInstanceOf(SessionNotFoundError);
  });

  it('throws the conflicts as their classes', async () => {
    const { sandbox } = await sandboxOn((call) =>
      call.path === '/files/rename'
        ? apiError(409, 'file_exists')
        : apiError(409, 'directory_not_empty'),
    );
    expect(await caught(sandbox.files.rename('a', 'b'))).toBeInstanceOf(FileExistsError);
    expect(await caught(sandbox.files.remove('dir'))).toBeInstanceOf(DirectoryNotEmptyError);
  });
});
