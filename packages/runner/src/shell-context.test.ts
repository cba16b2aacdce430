import { execFileSync } from 'node:child_process';
import { parseShellAnswer, SHELL_DIALECT, SHELL_HOST, shellLine } from './shell-context';

/** What the host loop (a real bash) prints for a token and these commands, on stdout. */
function hostOutput(commands: string[]): string {
  const input = SHELL_DIALECT.hello({ token: 'tok' }) + commands.map(shellLine).join('');
  return execFileSync('bash', ['--noprofile', '--norc', '-c', SHELL_HOST, 'bash'], {
    input,
    encoding: 'utf8',
  });
}

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

  it('answers ready, then each command in the same shell with its status', () => {
    const out = hostOutput(['x=1; cd /', 'echo "$x $PWD"; (exit 4)', "printf '%s' 'a\\nb\\c'"]);
    expect(out).toBe(`${mark}ready\n${done(0)}1 /\n${done(4)}a\\nb\\c${done(0)}`);
  });

  it("keeps a command's functions named printf, read or eval out of its loop", () => {
    const out = hostOutput([
      'printf() { echo hijacked; }; read() { return 1; }; eval() { echo no; }',
      'printf x',
    ]);
    expect(out).toBe(`${mark}ready\n${done(0)}hijacked\n${done(0)}`);
  });
});
