import { fakeCli, fakeSandbox, result, streamOf } from '../testing/fake-cli';

const SID = 'ses_aaaaaaaaaaaaaaaaaaaaaaaa';

function execCli(stream: ReturnType<typeof streamOf>, kill = jest.fn(() => Promise.resolve())) {
  const sandbox = fakeSandbox({ stream, processes: { kill } });
  return fakeCli({ connect: () => Promise.resolve(sandbox) });
}

describe('sandbox exec', () => {
  it('runs exactly the argv given, quoted for the shell', async () => {
    const stream = streamOf([{ type: 'result', result: result() }]);
    const cli = execCli(stream);
    expect(await cli.run('exec', SID, '--', 'printf', '%s\n', 'a b', '--json', '')).toBe(0);
    expect(stream.mock.calls[0]?.[0]).toEqual({ command: "printf '%s\n' 'a b' --json ''" });
  });

  it("streams the command's output and exits with its code", async () => {
    const cli = execCli(
      streamOf([
        { type: 'started', pid: 7, processId: 'proc_1' },
        { type: 'stdout', data: 'out\n' },
        { type: 'stderr', data: 'err\n' },
        { type: 'result', result: result({ stdout: 'out\n', stderr: 'err\n', exitCode: 7 }) },
      ]),
    );
    expect(await cli.run('exec', SID, '--', 'false')).toBe(7);
    expect([cli.stdout(), cli.stderr()]).toEqual(['out\n', 'err\n']);
  });

  it('passes its run options, and with --json prints only the whole result', async () => {
    const done = result({ stdout: 'hi\n' });
    const stream = streamOf([
      { type: 'stdout', data: 'hi\n' },
      { type: 'result', result: done },
    ]);
    const cli = execCli(stream);
    const argv = [
      'exec',
      '--json',
      '--timeout',
      '5',
      '--cwd',
      'app',
      '--env',
      'A=1',
      '--env',
      'B=x=y',
    ];
    expect(await cli.run(...argv, SID, '--', 'echo', 'hi')).toBe(0);
    expect(JSON.parse(cli.stdout())).toEqual(done);
    expect(stream.mock.calls[0]?.[1]).toMatchObject({
      timeoutMs: 5000,
      workingDir: 'app',
      env: { A: '1', B: 'x=y' },
    });
  });
});

describe('sandbox exec (its ends)', () => {
  it('exits 124 when the run timed out', async () => {
    const cli = execCli(
      streamOf([{ type: 'result', result: result({ timedOut: true, exitCode: 124 }) }]),
    );
    expect(await cli.run('exec', SID, '--', 'sleep', '99')).toBe(124);
    expect(cli.stderr()).toContain('timed out');
  });

  it('is a usage error without a command, or with a bad --timeout or --env', async () => {
    expect(await execCli(streamOf([])).run('exec', SID)).toBe(2);
    expect(await execCli(streamOf([])).run('exec', '--timeout', 'soon', SID, '--', 'ls')).toBe(2);
    expect(await execCli(streamOf([])).run('exec', '--env', 'NOVALUE', SID, '--', 'ls')).toBe(2);
  });

  it('at Ctrl-C kills the run by the pid it started with, leaves the stream and exits 130', async () => {
    const kill = jest.fn(() => Promise.resolve());
    let signal: AbortSignal | undefined;
    const stream = jest.fn(async function* (_input: unknown, options: { signal: AbortSignal }) {
      signal = options.signal;
      yield { type: 'started', pid: 42, processId: 'proc_1' };
      yield { type: 'stdout', data: 'working\n' };
      await new Promise((_resolve, reject) =>
        options.signal.addEventListener('abort', () => reject(options.signal.reason as Error)),
      );
    });
    const cli = execCli(stream as unknown as ReturnType<typeof streamOf>, kill);
    const exit = cli.run('exec', SID, '--', 'sleep', '100');
    await new Promise((resolve) => setTimeout(resolve, 10));
    cli.interrupt();
    expect(await exit).toBe(130);
    expect(kill).toHaveBeenCalledWith(42);
    expect(signal?.aborted).toBe(true);
    expect(cli.stdout()).toBe('working\n');
    expect(cli.stderr()).toContain('interrupted');
  });
});
