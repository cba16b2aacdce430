import {
  AbortedError,
  ContextRestartedError,
  SessionNotFoundError,
  type RunOptions,
} from '@sandbox/sdk';
import { OUTCOMES } from '../exit-codes';
import { fakeCli, fakeSandbox, result } from '../testing/fake-cli';

const CONTEXT = {
  contextId: 'ctx_aaaaaaaaaaaaaaaaaaaaaaaa',
  language: 'typescript',
  cwd: '/workspace',
  createdAt: '2026-01-01T00:00:00.000Z',
};

type CellOptions = RunOptions & { context: unknown };

/**
 * A context that answers like the service: a cell with an open brace is cut short (esbuild's
 * error), `boom` throws, `loop` runs until aborted, anything else has `ran: <code>` as value.
 */
function fakeContext() {
  const cells: string[] = [];
  const runCode = jest.fn(async (code: string, options: CellOptions) => {
    cells.push(code);
    // What only the service finds cut short (the CLI's esbuild sees a whole entry).
    if (code.includes('MORE') && !code.includes('done')) {
      const message = 'cell.ts:1:14: ERROR: Unexpected end of file';
      return result({
        exitCode: 1,
        results: [],
        error: { name: 'SyntaxError', message, stack: message },
      });
    }
    if (code.includes('loop')) {
      await new Promise((_resolve, reject) =>
        options.signal?.addEventListener('abort', () =>
          reject(new AbortedError({ code: 'aborted', status: 0, message: 'aborted' })),
        ),
      );
    }
    if (code.includes('exit')) {
      throw new ContextRestartedError({
        code: 'context_restarted',
        status: 409,
        message: 'The context was restarted',
      });
    }
    options.onStdout?.(`out of ${cells.length}\n`);
    if (code.includes('boom')) {
      const error = { name: 'Error', message: 'boom', stack: 'Error: boom\n    at <cell-1>:1:7' };
      return result({ exitCode: 1, results: [], error });
    }
    const value = { 'text/plain': `ran: ${code.trim()}`, isMain: true };
    const shown = { 'text/html': '<b>x</b>', 'text/plain': '[text/html]', isMain: false };
    options.onResult?.(shown);
    options.onResult?.(value);
    return result({ results: [shown, value] });
  });
  const contexts = {
    delete: jest.fn(() => Promise.resolve()),
    list: jest.fn(() => Promise.resolve([CONTEXT])),
  };
  const createContext = jest.fn(() => Promise.resolve(CONTEXT));
  const sandbox = fakeSandbox({ runCode, contexts, createContext });
  return { sandbox, runCode, contexts, createContext, cells };
}

describe('sandbox repl', () => {
  it('runs piped entries in order, joins an entry cut short, prints values and errors', async () => {
    const fake = fakeContext();
    const stdin =
      'const a = 1\nfunction f() {\n  return a\n}\n\nMORE\ndone\nboom()\n.exit\nnever\n';
    const cli = fakeCli({ connect: () => Promise.resolve(fake.sandbox) }, { stdin });
    expect(await cli.run('repl', 'ses_aaaaaaaaaaaaaaaaaaaaaaaa', '--timeout', '5')).toBe(0);
    expect(fake.cells).toEqual([
      'const a = 1\n',
      'function f() {\n  return a\n}\n',
      'MORE\n',
      'MORE\ndone\n',
      'boom()\n',
    ]);
    expect(fake.runCode.mock.calls[0]?.[1]).toMatchObject({ context: CONTEXT, timeoutMs: 5000 });
    expect(cli.stdout()).toContain(
      'out of 1\n[text/html, 8 B: not shown in a terminal]\nran: const a = 1\n',
    );
    expect(cli.stdout()).toContain('ran: function f() {\n  return a\n}');
    expect(cli.stdout()).not.toContain('...');
    expect(cli.stderr()).toContain('Error: boom\n    at <cell-1>:1:7\n');
    // The context made for it is deleted at the end.
    expect(fake.contexts.delete).toHaveBeenCalledWith(CONTEXT.contextId);
  });

  it('attaches to a context with --context, and leaves it', async () => {
    const fake = fakeContext();
    const cli = fakeCli({ connect: () => Promise.resolve(fake.sandbox) }, { stdin: '1\n' });
    const code = await cli.run(
      'repl',
      'ses_aaaaaaaaaaaaaaaaaaaaaaaa',
      '--context',
      CONTEXT.contextId,
    );
    expect(code).toBe(0);
    expect(fake.createContext).not.toHaveBeenCalled();
    expect(fake.contexts.delete).not.toHaveBeenCalled();
    expect(cli.stdout()).toContain('ran: 1');
  });
});

describe('sandbox repl --language bash', () => {
  it('makes a shell context and sends each line as a command, however it looks', async () => {
    const shell = { ...CONTEXT, language: 'bash' };
    const commands: string[] = [];
    const runCommand = jest.fn((command: string, options: CellOptions) => {
      commands.push(command);
      options.onStdout?.(`ran ${command.trim()}\n`);
      return Promise.resolve(result({ results: [] }));
    });
    const createContext = jest.fn(() => Promise.resolve(shell));
    const contexts = { delete: jest.fn(() => Promise.resolve()) };
    const sandbox = fakeSandbox({ runCommand, createContext, contexts });
    const stdin = 'cd src\nfunction f() {\n';
    const cli = fakeCli({ connect: () => Promise.resolve(sandbox) }, { stdin });
    expect(await cli.run('repl', 'ses_aaaaaaaaaaaaaaaaaaaaaaaa', '--language', 'bash')).toBe(0);
    expect(createContext).toHaveBeenCalledWith(expect.objectContaining({ language: 'bash' }));
    // A line a code context would join with the next is a whole command here.
    expect(commands).toEqual(['cd src\n', 'function f() {\n']);
    expect(runCommand.mock.calls[0]?.[1]).toMatchObject({ context: shell });
    expect(cli.stdout()).toContain('ran cd src\n');
  });
});

describe('sandbox repl: contexts refused, Ctrl-C and restarts', () => {
  it('exits 66 for a context the session does not have, and 2 for --context with --language', async () => {
    const fake = fakeContext();
    const cli = fakeCli({ connect: () => Promise.resolve(fake.sandbox) });
    const unknown = await cli.run(
      'repl',
      'ses_aaaaaaaaaaaaaaaaaaaaaaaa',
      '--context',
      'ctx_bbbbbbbbbbbbbbbbbbbbbbbb',
    );
    expect(unknown).toBe(OUTCOMES.notFound.code);
    expect(cli.stderr()).toContain('context_not_found');
    const both = await cli.run('repl', 'ses_a', '--context', 'ctx_b', '--language', 'javascript');
    expect(both).toBe(OUTCOMES.usage.code);
  });

  it('stops a running entry at Ctrl-C and goes on; a restarted context is said, not fatal', async () => {
    const fake = fakeContext();
    const cli = fakeCli(
      { connect: () => Promise.resolve(fake.sandbox) },
      { stdin: 'loop()\nprocess.exit()\n2\n' },
    );
    const running = cli.run('repl', 'ses_aaaaaaaaaaaaaaaaaaaaaaaa', '--keep');
    while (fake.cells.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    cli.interrupt();
    expect(await running).toBe(0);
    expect(fake.cells).toEqual(['loop()\n', 'process.exit()\n', '2\n']);
    expect(cli.stdout()).toContain('Interrupted: the cell was stopped');
    expect(cli.stdout()).toContain('The context was restarted\n');
    expect(cli.stdout()).toContain('ran: 2');
    expect(cli.stderr()).toContain(`sandbox: kept ${CONTEXT.contextId}`);
    expect(fake.contexts.delete).not.toHaveBeenCalled();
  });

  it('.restart empties the context; losing the session ends the REPL with exit 66', async () => {
    const fake = fakeContext();
    const restart = jest.fn(() => Promise.resolve(CONTEXT));
    Object.assign(fake.sandbox.contexts, { restart });
    fake.runCode.mockImplementationOnce(() =>
      Promise.reject(
        new SessionNotFoundError({ code: 'session_not_found', status: 404, message: 'gone' }),
      ),
    );
    const stdin = '.restart\nfirst()\nnever()\n';
    const cli = fakeCli({ connect: () => Promise.resolve(fake.sandbox) }, { stdin });
    expect(await cli.run('repl', 'ses_aaaaaaaaaaaaaaaaaaaaaaaa')).toBe(OUTCOMES.notFound.code);
    expect(restart).toHaveBeenCalledWith(CONTEXT.contextId);
    expect(cli.stdout()).toContain('The context was restarted.');
    expect(cli.stderr()).toContain('sandbox: gone (session_not_found)');
    expect(fake.runCode).toHaveBeenCalledTimes(1);
  });
});
