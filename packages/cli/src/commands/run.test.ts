import { fakeCli, fakeSandbox, result, streamOf } from '../testing/fake-cli';

/** A run that starts (pid 42) and goes on until its stream is aborted. */
function endless() {
  return jest.fn(async function* (_input: unknown, options: { signal: AbortSignal }) {
    yield { type: 'started', pid: 42, processId: 'proc_1' };
    await new Promise((_resolve, reject) =>
      options.signal.addEventListener('abort', () => reject(options.signal.reason as Error)),
    );
  });
}

describe('sandbox run', () => {
  it('runs standard input in a throwaway session, deleted afterwards; its exit code', async () => {
    const stream = streamOf([
      { type: 'stdout', data: '42\n' },
      { type: 'result', result: result({ exitCode: 3 }) },
    ]);
    const remove = jest.fn(() => Promise.resolve());
    const create = jest.fn(() => Promise.resolve(fakeSandbox({ stream, delete: remove })));
    const cli = fakeCli({ create }, { stdin: 'console.log(6 * 7)' });
    expect(await cli.run('run', '-')).toBe(3);
    expect(stream.mock.calls[0]?.[0]).toEqual({ code: 'console.log(6 * 7)' });
    expect(cli.stdout()).toBe('42\n');
    expect(remove).toHaveBeenCalledTimes(1);
  });

  it('keeps the new session with --keep, and runs in the one given with --session', async () => {
    const remove = jest.fn(() => Promise.resolve());
    const stream = streamOf([{ type: 'result', result: result() }]);
    const sandbox = fakeSandbox({ stream, delete: remove });
    const kept = fakeCli({ create: () => Promise.resolve(sandbox) }, { stdin: '1' });
    expect(await kept.run('run', '--keep', '-')).toBe(0);
    expect(kept.stderr()).toContain(`kept ${sandbox.id}`);
    const connect = jest.fn(() => Promise.resolve(sandbox));
    const given = fakeCli({ connect }, { stdin: '1' });
    expect(
      await given.run('run', '--session', 'ses_bbbbbbbbbbbbbbbbbbbbbbbb', '--timeout', '9', '-'),
    ).toBe(0);
    expect(connect).toHaveBeenCalledWith('ses_bbbbbbbbbbbbbbbbbbbbbbbb');
    expect(stream.mock.calls[1]?.[1]).toMatchObject({ timeoutMs: 9000 });
    expect(remove).not.toHaveBeenCalled();
  });

  it('refuses --keep with --session (nothing to keep)', async () => {
    const cli = fakeCli();
    expect(await cli.run('run', '--keep', '--session', 'ses_b', '-')).toBe(2);
    expect(cli.stderr()).toContain('cannot be used with option');
  });

  it('at Ctrl-C kills the run and still deletes the throwaway session; exits 130', async () => {
    const kill = jest.fn(() => Promise.resolve());
    const remove = jest.fn(() => Promise.resolve());
    const sandbox = fakeSandbox({ stream: endless(), delete: remove, processes: { kill } });
    const cli = fakeCli({ create: () => Promise.resolve(sandbox) }, { stdin: 'for (;;);' });
    const exit = cli.run('run', '-');
    await new Promise((resolve) => setTimeout(resolve, 10));
    cli.interrupt();
    expect(await exit).toBe(130);
    expect(kill).toHaveBeenCalledWith(42);
    expect(remove).toHaveBeenCalledTimes(1);
  });

  it('deletes the throwaway session when the run fails too', async () => {
    const remove = jest.fn(() => Promise.resolve());
    const stream = jest.fn(async function* () {
      await Promise.resolve();
      yield* [];
      throw new Error('stream cut');
    });
    const cli = fakeCli(
      { create: () => Promise.resolve(fakeSandbox({ stream, delete: remove })) },
      { stdin: '1' },
    );
    expect(await cli.run('run', '-')).toBe(1);
    expect(cli.stderr()).toBe('sandbox: stream cut\n');
    expect(remove).toHaveBeenCalledTimes(1);
  });

  it('exits 1 when the file cannot be read', async () => {
    const create = jest.fn();
    const cli = fakeCli({ create });
    expect(await cli.run('run', '/nonexistent/file.ts')).toBe(1);
    expect(cli.stderr()).toContain('ENOENT');
    expect(create).not.toHaveBeenCalled();
  });
});
