import type { SessionPage } from '@sandbox/sdk';
import { fakeCli, fakeSandbox } from '../testing/fake-cli';

function session(n: number): SessionPage['data'][number] {
  return {
    sessionId: `ses_${String(n).padStart(24, '0')}`,
    state: 'active',
    expiresAt: '2030-01-01T00:00:00.000Z',
  } as SessionPage['data'][number];
}

/** The API's pages over `total` sessions. */
function pagedList(total: number) {
  const all = Array.from({ length: total }, (_, n) => session(n));
  return jest.fn(({ limit, offset }: { limit: number; offset: number }) =>
    Promise.resolve({
      data: all.slice(offset, offset + limit),
      pagination: { total, limit, offset, hasMore: offset + limit < total },
    }),
  );
}

describe('sandbox ls', () => {
  it('pages through all the sessions, 100 at a time', async () => {
    const list = pagedList(250);
    const cli = fakeCli({ list });
    expect(await cli.run('ls', '--json')).toBe(0);
    expect(list.mock.calls.map(([page]) => page)).toEqual([
      { limit: 100, offset: 0 },
      { limit: 100, offset: 100 },
      { limit: 100, offset: 200 },
    ]);
    const listed = JSON.parse(cli.stdout()) as { sessionId: string }[];
    expect(listed).toHaveLength(250);
    expect(new Set(listed.map((s) => s.sessionId)).size).toBe(250);
  });

  it('prints a line per session for people (grep-able), or says there are none', async () => {
    const cli = fakeCli({ list: pagedList(2) });
    expect(await cli.run('ls')).toBe(0);
    expect(cli.stdout().split('\n')).toEqual([
      `${session(0).sessionId}  active      expires 2030-01-01T00:00:00.000Z`,
      `${session(1).sessionId}  active      expires 2030-01-01T00:00:00.000Z`,
      '',
    ]);
    const none = fakeCli({ list: pagedList(0) });
    expect(await none.run('ls')).toBe(0);
    expect([none.stdout(), none.stderr()]).toEqual(['', 'no sessions\n']);
  });

  it("lists a session's files under a directory", async () => {
    const files = [{ path: 'src/a.ts', size: 12, modified: '2030-01-01T00:00:00Z', type: 'file' }];
    const list = jest.fn(() => Promise.resolve({ files, truncated: true }));
    const connect = jest.fn(() => Promise.resolve(fakeSandbox({ files: { list } })));
    const cli = fakeCli({ connect });
    expect(await cli.run('ls', 'ses_aaaaaaaaaaaaaaaaaaaaaaaa:src')).toBe(0);
    expect(connect).toHaveBeenCalledWith('ses_aaaaaaaaaaaaaaaaaaaaaaaa');
    expect(list).toHaveBeenCalledWith('src');
    expect(cli.stdout()).toBe('        12  2030-01-01T00:00:00Z  src/a.ts\n');
    expect(cli.stderr()).toContain('only the first 1 files are listed');
  });
});
