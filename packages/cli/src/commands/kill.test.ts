import { fakeCli, fakeSandbox } from '../testing/fake-cli';

const SID = 'ses_aaaaaaaaaaaaaaaaaaaaaaaa';

function killCli(state: 'running' | 'exited' = 'running') {
  const kill = jest.fn((pid: number) => Promise.resolve({ killed: 1, pids: [pid] }));
  const killAll = jest.fn(() => Promise.resolve({ killed: 2, pids: [10, 11] }));
  const get = jest.fn((id: string) => Promise.resolve({ id, pid: 77, state }));
  const sandbox = fakeSandbox({ processes: { kill, killAll, get } });
  return { cli: fakeCli({ connect: () => Promise.resolve(sandbox) }), kill, killAll, get };
}

describe('sandbox kill', () => {
  it('kills one process by its pid', async () => {
    const { cli, kill } = killCli();
    expect(await cli.run('kill', SID, '42')).toBe(0);
    expect(kill).toHaveBeenCalledWith(42);
    expect(cli.stdout()).toBe('killed 1: 42\n');
  });

  it('kills one process by its process id, through its pid while it runs', async () => {
    const { cli, kill, get } = killCli();
    expect(await cli.run('kill', SID, 'proc_abc', '--json')).toBe(0);
    expect(get).toHaveBeenCalledWith('proc_abc');
    expect(kill).toHaveBeenCalledWith(77);
    expect(JSON.parse(cli.stdout())).toEqual({ killed: 1, pids: [77] });
  });

  it('does not kill the pid of a process id that ended (the pid may be another now)', async () => {
    const { cli, kill } = killCli('exited');
    expect(await cli.run('kill', SID, 'proc_abc')).toBe(0);
    expect(kill).not.toHaveBeenCalled();
    expect(cli.stdout()).toBe('killed 0\n');
    expect(cli.stderr()).toContain('proc_abc is not running (exited)');
  });

  it('kills every process with --all', async () => {
    const { cli, kill, killAll } = killCli();
    expect(await cli.run('kill', SID, '--all')).toBe(0);
    expect(killAll).toHaveBeenCalledWith();
    expect(kill).not.toHaveBeenCalled();
    expect(cli.stdout()).toBe('killed 2: 10 11\n');
  });

  it.each([
    [[SID], 'kill needs a process (a pid or a proc_ id), or --all'],
    [[SID, '42', '--all'], 'kill takes a process or --all, not both'],
    [[SID, 'nginx'], 'A pid (a number) or a process id (proc_…) is expected'],
  ])('is a usage error for kill %j', async (args, message) => {
    const { cli, kill } = killCli();
    expect(await cli.run('kill', ...args)).toBe(2);
    expect(cli.stderr()).toContain(message);
    expect(cli.stderr()).toContain('Usage: sandbox kill');
    expect(kill).not.toHaveBeenCalled();
  });
});
