import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { cpCommand } from './commands/cp';
import { createCommand } from './commands/create';
import { execCommand } from './commands/exec';
import { forkCommand } from './commands/fork';
import { infoCommand } from './commands/info';
import { killCommand } from './commands/kill';
import { logsCommand } from './commands/logs';
import { watchCommand } from './commands/watch';
import { lsCommand } from './commands/ls';
import { openCommand } from './commands/open';
import { psCommand } from './commands/ps';
import { replCommand } from './commands/repl';
import { rmCommand } from './commands/rm';
import { runCommand } from './commands/run';
import { snapshotCommand, snapshotsCommand } from './commands/snapshot';
import { terminalCommand } from './commands/terminal';
import type { Api, CliIo, Context } from './context';
import { exitCodesHelp } from './exit-codes';

/** The commands, in the order `sandbox --help` lists them. */
const COMMANDS: readonly ((ctx: Context) => Command)[] = [
  createCommand,
  lsCommand,
  infoCommand,
  forkCommand,
  runCommand,
  execCommand,
  cpCommand,
  terminalCommand,
  replCommand,
  openCommand,
  psCommand,
  logsCommand,
  watchCommand,
  killCommand,
  snapshotCommand,
  snapshotsCommand,
  rmCommand,
];

/** The package's version (package.json is one level up from both src/ and dist/). */
export const VERSION = (
  JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string }
).version;

const EPILOGUE = `
Environment:
  SANDBOX_API_URL   the API's base URL, /v1 included (default http://127.0.0.1:8080/v1)
  SANDBOX_API_KEY   the API key (sk_live_…)

Output is for people; --json (an option of each command that prints a result) prints JSON.
Run 'sandbox <command> --help' for a command's options and examples.

${exitCodesHelp()}`;

export interface ProgramDeps {
  io: CliIo;
  /** The API as the --api-url and --api-key options (or their variables) say. */
  api: (client: { apiUrl?: string; apiKey?: string }) => Api;
  setExitCode(code: number): void;
}

/**
 * The `sandbox` program: its global options (where the API is), its commands, and commander
 * set to throw instead of exiting and to write to `io`. Does no I/O until parsed.
 */
export function buildProgram(deps: ProgramDeps): Command {
  const { io } = deps;
  const program = new Command('sandbox')
    .usage('[--api-url <url>] [--api-key <key>] <command> [options]')
    .description('The command-line client of the sandbox service.')
    .version(VERSION, '-V, --version', 'print the version')
    .option('--api-url <url>', 'the API base URL (default: $SANDBOX_API_URL)')
    .option('--api-key <key>', 'the API key (default: $SANDBOX_API_KEY)')
    .helpOption('-h, --help', 'show help')
    .helpCommand('help [command]', "show a command's help")
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      outputError: (text, write) => write(`sandbox: ${text.replace(/^error: /, '')}`),
    })
    .showHelpAfterError("(run 'sandbox --help' for usage)")
    .exitOverride()
    .addHelpText('after', EPILOGUE);
  const ctx: Context = {
    io,
    setExitCode: (code) => deps.setExitCode(code),
    api: () => {
      const { apiUrl, apiKey } = program.opts<{ apiUrl?: string; apiKey?: string }>();
      return deps.api({
        apiUrl: apiUrl ?? io.env.SANDBOX_API_URL,
        apiKey: apiKey ?? io.env.SANDBOX_API_KEY,
      });
    },
  };
  for (const make of COMMANDS) {
    const command = make(ctx).copyInheritedSettings(program);
    command.showHelpAfterError(
      `Usage: sandbox ${command.name()} ${command.usage()}\n` +
        `(run 'sandbox ${command.name()} --help' for its options and examples)`,
    );
    program.addCommand(command);
  }
  return program;
}
