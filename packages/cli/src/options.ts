import { type Command, InvalidArgumentError, Option } from 'commander';

/*
 * Parsers of option and argument values, for commander: each turns the text into its value or
 * throws InvalidArgumentError (a usage error, exit code 2, naming the option).
 */

/** A number above zero (seconds, MB, cores). */
export function positiveNumber(text: string): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n <= 0) {
    throw new InvalidArgumentError('A number above 0 is expected.');
  }
  return n;
}

/** A TCP port, 1 to 65535. */
export function port(text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1 || n > 65535) {
    throw new InvalidArgumentError('A port from 1 to 65535 is expected.');
  }
  return n;
}

/** One NAME=VALUE more for an environment given option by option. */
export function envPair(
  pair: string,
  env: Record<string, string> | undefined,
): Record<string, string> {
  const at = pair.indexOf('=');
  if (at <= 0) throw new InvalidArgumentError(`NAME=VALUE is expected, not ${pair}.`);
  return { ...env, [pair.slice(0, at)]: pair.slice(at + 1) };
}

/** A JSON object. */
export function jsonObject(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InvalidArgumentError('A JSON object is expected.');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidArgumentError('A JSON object is expected.');
  }
  return value as Record<string, unknown>;
}

/** A process of a session: a pid (a number) or a process id (`proc_…`). */
export function processRef(text: string): number | string {
  if (/^[1-9]\d*$/.test(text)) return Number(text);
  if (/^proc_[A-Za-z0-9]+$/.test(text)) return text;
  throw new InvalidArgumentError('A pid (a number) or a process id (proc_…) is expected.');
}

/** `SID:PATH` as a session and a path (`SID:` is the session's /workspace), else undefined. */
export function remotePath(arg: string): { sessionId: string; path: string } | undefined {
  const match = /^(ses_[A-Za-z0-9]+):(.*)$/s.exec(arg);
  return match === null ? undefined : { sessionId: match[1] as string, path: match[2] as string };
}

/** The --json option, with what it prints for this command. */
export function jsonOption(what: string): Option {
  return new Option('--json', `print ${what} as JSON instead of for people`);
}

/** The examples block of a command's --help. */
export function examples(...lines: string[]): string {
  return `\nExamples:\n${lines.map((line) => `  $ ${line}`).join('\n')}`;
}

/** The flags are in seconds, as the API's; the SDK takes milliseconds. */
export function secondsToMs(seconds: number | undefined): number | undefined {
  return seconds === undefined ? undefined : seconds * 1000;
}

/** The flags of every run (`exec`, `run`), as `withRunOptions` reads them. */
export interface RunFlags {
  timeout?: number;
  env?: Record<string, string>;
  json?: boolean;
}

/**
 * Adds the options of every run to `command`: its timeout, then those `own` adds (listed
 * there in --help), its environment, a JSON result.
 */
export function withRunOptions(command: Command, own = (c: Command) => c): Command {
  return own(
    command.option(
      '--timeout <seconds>',
      "the run's timeout: killed after it (default: the session's, 30)",
      positiveNumber,
    ),
  )
    .option('--env <name=value>', 'an environment variable of the run (repeatable)', envPair)
    .addOption(jsonOption('the whole result ({stdout, stderr, exitCode, …}) at the end'));
}

/** What the SDK takes of a run's flags. */
export function runOptionsOf(flags: RunFlags): {
  timeoutMs?: number;
  env?: Record<string, string>;
} {
  return { timeoutMs: secondsToMs(flags.timeout), env: flags.env };
}
