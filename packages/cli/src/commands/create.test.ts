import { fakeCli, fakeSandbox } from '../testing/fake-cli';

describe('sandbox create', () => {
  it('prints the id alone on stdout, the preview and its header on stderr', async () => {
    const sandbox = fakeSandbox({
      previewToken: 'tok',
      previewHeaders: () => ({ 'x-preview-token': 'tok' }),
    });
    const create = jest.fn(() => Promise.resolve(sandbox));
    const cli = fakeCli({ create });
    expect(await cli.run('create', '--private-preview')).toBe(0);
    expect(cli.stdout()).toBe(`${sandbox.id}\n`);
    expect(cli.stderr()).toBe(
      'preview: https://aaaa.preview.test\npreview header: x-preview-token: tok\n',
    );
    expect(create).toHaveBeenCalledWith(expect.objectContaining({ preview: { private: true } }));
  });

  it("takes the session's lifetime (--ttl) apart from its runs' timeout (--run-timeout)", async () => {
    const create = jest.fn(() => Promise.resolve(fakeSandbox()));
    const cli = fakeCli({ create });
    const argv = ['--ttl', '3600', '--run-timeout', '20', '--memory', '512', '--json'];
    expect(await cli.run('create', ...argv, '--metadata', '{"job":1}')).toBe(0);
    expect(create).toHaveBeenCalledWith({
      ttlMs: 3_600_000,
      metadata: { job: 1 },
      resourceLimits: { memory: 512, cpu: undefined, timeout: 20 },
      preview: undefined,
    });
    expect(JSON.parse(cli.stdout())).toEqual({
      sessionId: 'ses_aaaaaaaaaaaaaaaaaaaaaaaa',
      previewUrl: 'https://aaaa.preview.test',
    });
  });

  it.each([
    [['--timeout', '20'], 'is now --run-timeout'],
    [['--ttl', 'forever'], 'A number above 0 is expected'],
    [['--metadata', '[1]'], 'A JSON object is expected'],
  ])('is a usage error for create %j', async (args, message) => {
    const create = jest.fn();
    const cli = fakeCli({ create });
    expect(await cli.run('create', ...args)).toBe(2);
    expect(cli.stderr()).toContain(message);
    expect(create).not.toHaveBeenCalled();
  });
});
