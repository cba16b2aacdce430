import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HostCommandError, HostCommands } from './host-commands';

const commands = new HostCommands();
afterAll(() => commands.close());

describe('HostCommands', () => {
  it('runs a command with its words as given, no shell between, and answers its output', async () => {
    const output = await commands.run(['printf', '%s|', 'a b', '$HOME', '"q"', "it's", '']);
    expect(output).toBe(`a b|$HOME|"q"|it's||`);
  });

  it('fails with the exit code and the output of a command that failed', async () => {
    const failed = commands.run(['sh', '-c', 'echo out; echo err >&2; exit 3']);
    await expect(failed).rejects.toBeInstanceOf(HostCommandError);
    await expect(failed).rejects.toMatchObject({ code: 3, output: 'out\nerr' });
    await expect(commands.run(['/nonexistent/tool'])).rejects.toMatchObject({ code: 127 });
  });

  it('runs commands that overlap at the same time', async () => {
    const flag = join(mkdtempSync(join(tmpdir(), 'host-commands-')), 'flag');
    // The first ends only once the second has run: one after the other, it never would.
    const waiting = commands.run([
      'sh',
      '-c',
      'while [ ! -e "$1" ]; do sleep 0.01; done',
      '-',
      flag,
    ]);
    await commands.run(['touch', flag]);
    await waiting;
    expect(existsSync(flag)).toBe(true);
  });

  it('keeps its helper between commands, and makes another when one died', async () => {
    const parent = async () => Number(await commands.run(['sh', '-c', 'echo $PPID']));
    const helper = await parent();
    expect(await parent()).toBe(helper);
    process.kill(helper, 'SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const next = await parent();
    expect(next).not.toBe(helper);
    expect(await commands.run(['echo', 'still here'])).toBe('still here');
  });

  it('serves a burst of more commands than it has helpers with the same helpers, and keeps them', async () => {
    const few = new HostCommands(2);
    try {
      // Each command outlasts the burst's arrival, so all of them overlap.
      const burst = () =>
        Promise.all(
          Array.from({ length: 6 }, () => few.run(['sh', '-c', 'sleep 0.05; echo $PPID'])),
        );
      const first = new Set(await burst());
      expect(first.size).toBeLessThanOrEqual(2);
      const second = new Set(await burst());
      expect([...second].every((helper) => first.has(helper))).toBe(true);
      expect(few.started).toBe(first.size);
    } finally {
      few.close();
    }
  });

  it('refuses a word with a newline, which would end it early', async () => {
    await expect(commands.run(['echo', 'a\nb'])).rejects.toThrow(/newline/);
  });
});
