import { fakeCli, fakeSandbox } from '../testing/fake-cli';

const fork = (id: string) =>
  fakeSandbox({ id, previewUrl: () => `https://${id}.preview.test`, previewToken: undefined });

describe('sandbox fork', () => {
  it('prints the forks’ ids on stdout, their previews and what was kept on stderr', async () => {
    const forks = Object.assign([fork('ses_b'), fork('ses_c')], { processesKept: false });
    const forkCall = jest.fn(() => Promise.resolve(forks));
    const connect = jest.fn(() => Promise.resolve(fakeSandbox({ fork: forkCall })));
    const cli = fakeCli({ connect });
    expect(await cli.run('fork', 'ses_a', '--count', '2')).toBe(0);
    expect(connect).toHaveBeenCalledWith('ses_a');
    expect(forkCall).toHaveBeenCalledWith({ count: 2, processes: true });
    expect(cli.stdout()).toBe('ses_b\nses_c\n');
    expect(cli.stderr()).toBe(
      'preview: https://ses_b.preview.test\npreview: https://ses_c.preview.test\n' +
        'processes kept: no (files only: start their programs again)\n',
    );
  });

  it('asks for files only with --files-only, and prints JSON with --json', async () => {
    const forkCall = jest.fn(() =>
      Promise.resolve(Object.assign([fork('ses_b')], { processesKept: false })),
    );
    const cli = fakeCli({ connect: () => Promise.resolve(fakeSandbox({ fork: forkCall })) });
    expect(await cli.run('fork', 'ses_a', '--files-only', '--json')).toBe(0);
    expect(forkCall).toHaveBeenCalledWith({ count: 1, processes: false });
    expect(JSON.parse(cli.stdout())).toEqual({
      sessions: [{ sessionId: 'ses_b', previewUrl: 'https://ses_b.preview.test' }],
      processesKept: false,
    });
  });

  it.each([['0'], ['11'], ['2.5'], ['many']])('is a usage error for --count %s', async (count) => {
    const connect = jest.fn();
    const cli = fakeCli({ connect });
    expect(await cli.run('fork', 'ses_a', '--count', count)).toBe(2);
    expect(cli.stderr()).toContain('An integer from 1 to 10 is expected');
    expect(connect).not.toHaveBeenCalled();
  });
});
