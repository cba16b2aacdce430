/**
 * A shell context (ADR 59): a long-lived bash of its own, started by the spawner as the
 * sandbox user like any run, that runs one command at a time in itself, so that what a
 * command changes in the shell (its directory, its variables, its functions) is there for the
 * next. It speaks the code contexts' framing (frames.ts): its answers on stdout, an end mark
 * on stderr after each command. Pure (context-ops.ts starts the shell); unit-tested beside.
 */
import type { ContextDialect, ParsedAnswer } from './code-context';
import { killRunTree } from './run-stop';

/**
 * The shell's own loop. Its first line is the token of its answers; then each line is one
 * command, its backslashes and newlines escaped (`shellLine`), which `printf %b` restores.
 * - The loop reads and answers on descriptors of its own, taken at its start: a command's
 *   stdin is /dev/null, and a command that redirects its shell's output (`exec >log`) still
 *   gets its answer.
 * - The command is `eval`ed in the shell itself, inside a loop of one round: a `break` or
 *   `continue` of its own ends the command, not the shell (`continue 2` still gets its
 *   answer, status 0; `break 2` leaves the loop, and the shell ends).
 * - `$?` is the last command's status, as in a shell; `set -x` traces the commands, not the
 *   loop; `builtin` keeps a command's functions named `read`, `eval` or `printf` out of it.
 */
export const SHELL_HOST = [
  'IFS= builtin read -r __sandbox_mark || builtin exit 0',
  'builtin export SANDBOX_RUN_ID="shell-$__sandbox_mark"',
  '__sandbox_mark=$\'\\x1e\'"$__sandbox_mark"',
  'exec {__sandbox_in}<&0 {__sandbox_out}>&1 {__sandbox_err}>&2 </dev/null',
  '__sandbox_status=0 __sandbox_pending= __sandbox_x=',
  '__sandbox_set() { builtin return "$1"; }',
  'builtin printf \'%sready\\n\' "$__sandbox_mark" >&"$__sandbox_out"',
  'while {',
  '  [[ -z $__sandbox_pending ]] || {',
  '    builtin printf \'%sdone 0\\n\' "$__sandbox_mark" >&"$__sandbox_out"',
  '    builtin printf \'%s\\n\' "$__sandbox_mark" >&"$__sandbox_err"',
  '  }',
  '  __sandbox_pending=',
  '  IFS= builtin read -r -u "$__sandbox_in" __sandbox_cell',
  '} 2>/dev/null; do',
  '  {',
  '    builtin printf -v __sandbox_cell \'%b\' "$__sandbox_cell"',
  '    __sandbox_pending=1',
  '    __sandbox_set "$__sandbox_status"',
  '  } 2>/dev/null',
  '  for __sandbox_once in 1; do builtin eval "${__sandbox_x:+builtin set -x;}$__sandbox_cell"; done',
  '  {',
  '    __sandbox_status=$? __sandbox_pending= __sandbox_x=',
  '    [[ $- == *x* ]] && __sandbox_x=1',
  '    builtin set +x',
  '    builtin printf \'%sdone %d\\n\' "$__sandbox_mark" "$__sandbox_status" >&"$__sandbox_out"',
  '    builtin printf \'%s\\n\' "$__sandbox_mark" >&"$__sandbox_err"',
  '  } 2>/dev/null',
  'done',
].join('\n');

/**
 * The run mark (RUN_MARK) the loop exports for what the shell starts, of this start's token:
 * a restarted shell's is another, so that ending the last one's tree spares the new one.
 */
export function shellMark(token: string): string {
  return `shell-${token}`;
}

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
  // The shell, its tree and whatever carries the mark the loop exported (`shellMark`).
  endTree: (pid, token) =>
    killRunTree(pid, shellMark(token)).catch((err: unknown) => {
      process.stderr.write(`ending a shell: ${String(err)}\n`);
    }),
  timedOutError: {
    name: 'TimeoutError',
    message: TIMED_OUT,
    stack: `TimeoutError: ${TIMED_OUT}`,
  },
};
