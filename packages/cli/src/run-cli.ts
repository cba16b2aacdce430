import { CommanderError } from 'commander';
import { sdkApi, type Api, type CliIo } from './context';
import { exitCodeOf } from './exit-codes';
import { errorLine } from './output';
import { buildProgram } from './program';

export interface CliDeps {
  /** The API for the client options given (default: the SDK); tests pass a fake. */
  api?: (client: { apiUrl?: string; apiKey?: string }) => Api;
}

/**
 * Runs one command line (`argv` without the node and script paths); resolves with the exit
 * code. Every failure ends here: commander's own (already printed, with the usage), and those
 * of the commands, printed as one line and given the exit code of their class.
 */
export async function runCli(
  argv: readonly string[],
  io: CliIo,
  deps: CliDeps = {},
): Promise<number> {
  let exitCode = 0;
  const program = buildProgram({
    io,
    api: deps.api ?? sdkApi,
    setExitCode: (code) => (exitCode = code),
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (err) {
    if (!(err instanceof CommanderError)) io.stderr.write(`${errorLine(err)}\n`);
    return exitCodeOf(err);
  }
}
