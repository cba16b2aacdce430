import { spawn } from 'node:child_process';
import { RUN_MARK } from './run-stop';
import { parseShellAnswer, SHELL_DIALECT, SHELL_HOST, shellLine, shellMark } from './shell-context';

/**
 * What the host loop (a real bash) prints for a token and these commands, on stdout. Its stdin
 * stays open until every command is answered, as the runner's pipe does.
 */
function hostOutput(commands: string[], stderr: 'ignore' | 'stdout' = 'ignore'): Promise<string> {
  const script = stderr === 'stdout' ? `exec 2>&1\n${SHELL_HOST}` : SHELL_HOST;
  const shell = spawn('bash', ['--noprofile', '--norc', '-c', script, 'bash'], {
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  shell.stdin.write(SHELL_DIALECT.hello({ token: 'tok' }) + commands.map(shellLine).join(''));
  let out = '';
  shell.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    if (out.split(`${mark}done `).length - 1 === commands.length) shell.stdin.end();
  });
  const timer = setTimeout(() => shell.kill('SIGKILL'), 5000);
  return new Promise((resolve) =>
    shell.once('close', () => {
      clearTimeout(timer);
      resolve(out);
    }),
  );
}

const ready = `\x1etok` + 'ready\n';
const mark = '\x1etok';

const done = (exitCode: number) => `${mark}done ${exitCode}\n`;

describe('a shell context', () => {
  it('reads only `ready` and `done` with a status from its answer lines', () => {
    expect(parseShellAnswer('ready')).toEqual({ ev: 'ready' });
    expect(parseShellAnswer('done 7')).toEqual({
      ev: 'done',
      timedOut: false,
      exitCode: 7,
      results: [],
    });
    const forged = ['done 256', 'done -1', 'done 1 2', '{"ev":"done","results":[null]}', ''];
    for (const frame of forged) expect(parseShellAnswer(frame)).toBeUndefined();
  });

  it('escapes only backslashes and newlines, one line a command', () => {
    expect(shellLine('a\\b\nc\td "e"')).toBe('a\\\\b\\nc\td "e"\n');
  });

  it('answers ready, then each command in the same shell with its status', async () => {
    const out = await hostOutput([
      'x=1; cd /',
      'echo "$x $PWD"; (exit 4)',
      "printf '%s' 'a\\nb\\c'",
    ]);
    expect(out).toBe(`${mark}ready\n${done(0)}1 /\n${done(4)}a\\nb\\c${done(0)}`);
  });

  it('ends a command, not the shell, at its own break or continue; answers each', async () => {
    const out = await hostOutput([
      'kept=1',
      'break',
      'continue',
      'for i in 1; do continue 2; done',
      'echo $kept',
    ]);
    expect(out).toBe(`${ready}${done(0)}${done(0)}${done(0)}${done(0)}1\n${done(0)}`);
  });

  it("gives each command the last one's status as $?, as a shell does", async () => {
    expect(await hostOutput(['(exit 3)', 'echo $?'])).toBe(`${ready}${done(3)}3\n${done(0)}`);
  });

  it('answers a command that redirected the shell, on descriptors of its own', async () => {
    const out = await hostOutput([
      'exec >/dev/null',
      'echo hidden; (exit 4)',
      'exec >&2; echo back',
    ]);
    expect(out).toBe(`${ready}${done(0)}${done(4)}${done(0)}`);
  });

  it("gives a command /dev/null as stdin while the shell's own stays open", async () => {
    const out = await hostOutput(['cat; read -r line; echo "read $?"', 'echo alive']);
    expect(out).toBe(`${ready}read 1\n${done(0)}alive\n${done(0)}`);
  });

  it('traces the commands under set -x, never the loop', async () => {
    const out = await hostOutput(['set -x', 'echo one', 'set +x', 'echo two'], 'stdout');
    const traced = out.split('\n').filter((line) => line.startsWith('+'));
    expect(traced).toEqual(['++ echo one', '++ set +x']);
  });

  it("marks what the shell starts with this start's run mark", async () => {
    const out = await hostOutput([`echo "$${RUN_MARK}"`]);
    expect(out).toBe(`${ready}${shellMark('tok')}\n${done(0)}`);
  });

  it("keeps a command's functions named printf, read or eval out of its loop", async () => {
    const out = await hostOutput([
      'printf() { echo hijacked; }; read() { return 1; }; eval() { echo no; }',
      'printf x',
    ]);
    expect(out).toBe(`${mark}ready\n${done(0)}hijacked\n${done(0)}`);
  });
});
