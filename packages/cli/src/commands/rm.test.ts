import { ServiceUnavailableError, SessionNotFoundError } from '@sandbox/sdk';
import { fakeCli, fakeSandbox } from '../testing/fake-cli';

const gone = () =>
  new SessionNotFoundError({
    code: 'session_not_found',
    status: 404,
    message: 'Session not found',
  });
const down = () =>
  new ServiceUnavailableError({ code: 'service_unavailable', status: 503, message: 'Down' });

/** An API where `missing` ids are gone and `failing` ones fail; deletes are recorded. */
function rmCli(missing: string[], failing: string[] = []) {
  const deleted: string[] = [];
  const connect = (id: string) => {
    if (missing.includes(id)) return Promise.reject(gone());
    if (failing.includes(id)) return Promise.reject(down());
    return Promise.resolve(
      fakeSandbox({ id, delete: () => Promise.resolve(void deleted.push(id)) }),
    );
  };
  return { cli: fakeCli({ connect }), deleted };
}

describe('sandbox rm', () => {
  it('goes on past ids already gone, reports them, and exits 0: every id is gone', async () => {
    const { cli, deleted } = rmCli(['ses_b']);
    expect(await cli.run('rm', 'ses_a', 'ses_b', 'ses_c')).toBe(0);
    expect(deleted).toEqual(['ses_a', 'ses_c']);
    expect(cli.stdout()).toBe('deleted ses_a\ndeleted ses_c\n');
    expect(cli.stderr()).toBe('sandbox: ses_b was already gone\n');
  });

  it('exits 0 when all were gone already', async () => {
    const { cli } = rmCli(['ses_a', 'ses_b']);
    expect(await cli.run('rm', 'ses_a', 'ses_b', '--json')).toBe(0);
    expect(JSON.parse(cli.stdout())).toEqual({
      deleted: [],
      missing: ['ses_a', 'ses_b'],
      failed: [],
    });
  });

  it("goes on past a failure too, and exits with that failure's code", async () => {
    const { cli, deleted } = rmCli([], ['ses_a']);
    expect(await cli.run('rm', 'ses_a', 'ses_b')).toBe(69);
    expect(deleted).toEqual(['ses_b']);
    expect(cli.stderr()).toBe('sandbox: Down (service_unavailable) [ses_a]\n');
  });

  it('needs at least one id', async () => {
    expect(await rmCli([]).cli.run('rm')).toBe(2);
  });
});
