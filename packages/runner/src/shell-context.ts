/**
 * A shell context (ADR 59): a long-lived bash of its own, started by the spawner as the
 * sandbox user like any run, that runs one command at a time in itself, so that what a
 * command changes in the shell (its directory, its variables, its functions) is there for the
 * next. It speaks the code contexts' framing (frames.ts): its answers on stdout, an end mark
 * on stderr after each command. Pure (context-ops.ts starts the shell); unit-tested beside.
 */
import type { ContextDialect, ParsedAnswer } from './code-context';

/**
 * The shell's own loop. Its first line is the token of its answers; then each line is one
 * command, its backslashes and newlines escaped (`shellLine`), which `printf %b` restores. The
 * command is `eval`ed in the shell itself, its stdin /dev/null (the shell's own is the
 * runner's pipe); `builtin` keeps a command's functions named `read`, `eval` or `printf` out
 * of the loop.
 */
export const SHELL_HOST = [
  'IFS= builtin read -r __sandbox_mark || exit 0',
  '__sandbox_mark=$\'\\x1e\'"$__sandbox_mark"',
  'builtin printf \'%sready\\n\' "$__sandbox_mark"',
  'while IFS= builtin read -r __sandbox_cell; do',
  '  builtin printf -v __sandbox_cell \'%b\' "$__sandbox_cell"',
  '  builtin eval "$__sandbox_cell" </dev/null',
  '  builtin printf \'%sdone %d\\n\' "$__sandbox_mark" "$?"',
  '  builtin printf \'%s\\n\' "$__sandbox_mark" >&2',
  'done',
].join('\n');

/** A command as one line of the loop above: `\` and newline escaped for `printf %b`. */
export function shellLine(command: string): string {
  return `${command.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}\n`;
}

const TIMED_OUT =
  'The command ran out of time: the shell was ended with it (its variables and directory are gone); the next command runs in a fresh shell';

/** A command's status, as the loop answers it: `done` and 0 to 255. */
const DONE = /^done (\d{1,3})$/;

/**
 * A shell's answer line: `ready`, or `done` with the command's status. Any command can write
 * the shell's mark (it is one of the shell's variables), so nothing else is read from it.
 */
export function parseShellAnswer(frame: string): ParsedAnswer | undefined {
  if (frame === 'ready') return { ev: 'ready' };
  const status = DONE.exec(frame)?.[1];
  if (status === undefined || Number(status) > 255) return undefined;
  return { ev: 'done', timedOut: false, exitCode: Number(status), results: [] };
}

/** How the runner speaks to a shell context's bash. */
export const SHELL_DIALECT: ContextDialect = {
  // The shell is started in its directory with its environment: it needs only the token.
  hello: ({ token }) => `${token}\n`,
  cell: ({ code }) => shellLine(code),
  parse: parseShellAnswer,
  selfTimed: false,
  timedOutError: {
    name: 'TimeoutError',
    message: TIMED_OUT,
    stack: `TimeoutError: ${TIMED_OUT}`,
  },
};
