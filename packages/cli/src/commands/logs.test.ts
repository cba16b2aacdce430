import { fakeCli, fakeSandbox } from '../testing/fake-cli';

const SID = 'ses_aaaaaaaaaaaaaaaaaaaaaaaa';

describe('sandbox logs', () => {
  it("prints a run's kept output, by pid or process id, to stdout and stderr", async () => {
    const output = jest.fn(() => Promise.resolve({ stdout: 'out\n', stderr: 'err\n' }));
    const connect = () => Promise.resolve(fakeSandbox({ processes: { output } }));
    const cli = fakeCli({ connect });
    expect(await cli.run('logs', SID, '12')).toBe(0);
    expect(await cli.run('logs', SID, 'proc_x')).toBe(0);
    expect(output.mock.calls).toEqual([[12], ['proc_x']]);
    expect([cli.stdout(), cli.stderr()]).toEqual(['out\nout\n', 'err\nerr\n']);
  });

  it('follows a run with -f, a gap said on stderr', async () => {
    const follow = jest.fn(async function* () {
      await Promise.resolve();
      yield { type: 'stdout', data: 'tick\n' };
      yield { type: 'gap', stdout: 10, stderr: 0 };
      yield { type: 'end', process: {} };
    });
    const cli = fakeCli({ connect: () => Promise.resolve(fakeSandbox({ processes: { follow } })) });
    expect(await cli.run('logs', '-f', SID, '12')).toBe(0);
    expect(cli.stdout()).toBe('tick\n');
    expect(cli.stderr()).toContain('output dropped');
  });

  it('is a usage error for a process that is neither a pid nor a process id', async () => {
    expect(await fakeCli().run('logs', SID, 'web')).toBe(2);
  });
});
