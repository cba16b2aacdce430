import { Command } from 'commander';
import WebSocket from 'ws';
import type { Terminal } from '@sandbox/sdk';
import { action, type CliIo, type Context } from '../context';
import { examples } from '../options';

type Screen = NodeJS.WritableStream & { columns?: number; rows?: number };
type Keys = NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => void };

/** `sandbox terminal SID`: an interactive shell of the session in this terminal. */
export function terminalCommand(ctx: Context): Command {
  return new Command('terminal')
    .summary('an interactive shell in a session')
    .description(
      'Open an interactive shell in the session, in this terminal (raw mode: Ctrl-C goes to ' +
        "the shell). Exits with the shell's exit code. Input that ends (a pipe) ends the shell's " +
        'input with ^D.',
    )
    .argument('<session>', 'the session id (ses_…)')
    .option('--shell <path>', 'the absolute path of the shell to run (default /bin/bash)')
    .addHelpText(
      'after',
      examples('sandbox terminal ses_…', "printf 'ls\\nexit\\n' | sandbox terminal ses_…"),
    )
    .action(
      action(ctx, async (sessionId: string, flags: { shell?: string }) => {
        const sandbox = await ctx.api().connect(sessionId);
        const screen = ctx.io.stdout as Screen;
        const terminal = await sandbox.terminals.create({
          shell: flags.shell,
          cols: screen.columns ?? 80,
          rows: screen.rows ?? 24,
        });
        return attach(terminal, ctx.io);
      }),
    );
}

/**
 * This terminal on the session's: keys go there raw, its screen comes here, resizes follow.
 * Resolves with the shell's exit code when the connection closes.
 */
async function attach(terminal: Terminal, io: CliIo): Promise<number> {
  const keys = io.stdin as Keys;
  const screen = io.stdout as Screen;
  const ws = new WebSocket(terminal.url);
  // Listened to before the open: the shell's first bytes (its prompt) may come in the same
  // read as the upgrade's answer, and are emitted before an await after 'open' resumes.
  let exitCode = 1;
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    if (isBinary) {
      screen.write(data);
      return;
    }
    const control = JSON.parse(data.toString('utf8')) as {
      type: string;
      exitCode?: number;
      error?: { message: string; code: string };
    };
    if (control.type === 'exit') exitCode = control.exitCode ?? 1;
    if (control.type === 'error') {
      io.stderr.write(`\r\nsandbox: ${control.error?.message} (${control.error?.code})\r\n`);
    }
  });
  const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const onKeys = (chunk: Buffer): void => ws.send(chunk, { binary: true });
  const onEnd = (): void => ws.send(Buffer.from([4]), { binary: true }); // ^D
  const onResize = (): void =>
    ws.send(JSON.stringify({ type: 'resize', cols: screen.columns, rows: screen.rows }));
  if (keys.isTTY === true) keys.setRawMode?.(true);
  keys.on('data', onKeys);
  keys.on('end', onEnd);
  screen.on('resize', onResize);
  await closed;
  if (keys.isTTY === true) keys.setRawMode?.(false);
  keys.off('data', onKeys);
  keys.off('end', onEnd);
  screen.off('resize', onResize);
  keys.pause();
  return exitCode;
}
