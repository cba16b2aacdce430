import { Command } from 'commander';
import { action, type Context } from '../context';
import { examples, runOptionsOf, withRunOptions, type RunFlags } from '../options';
import { outputOf } from '../output';
import { interruptSignal, streamRun } from '../run-stream';
import { shellQuote } from '../shell-quote';

interface ExecFlags extends RunFlags {
  cwd?: string;
}

/** `sandbox exec SID -- COMMAND ARGS...`: exactly that argv, run by the session's shell. */
export function execCommand(ctx: Context): Command {
  return withRunOptions(
    new Command('exec')
      .summary('run a command (exactly its argv) in a session')
      .description(
        'Run a command in the session with exactly the arguments given (quoted for its shell: ' +
          "for shell syntax, run sh -c '…'). Output streams live; exits with the command's exit " +
          'code (124: it timed out; 130: Ctrl-C killed it).',
      )
      .usage('[options] <session> -- <command> [args...]')
      .argument('<session>', 'the session id (ses_…)')
      .argument('<command...>', 'the command and its arguments, after --'),
    (command) => command.option('--cwd <dir>', 'the working directory, relative to /workspace'),
  )
    .addHelpText(
      'after',
      examples(
        "sandbox exec ses_… -- printf '%s\\n' 'a b'",
        'sandbox exec --cwd app --timeout 120 ses_… -- npm test',
        "sandbox exec ses_… -- sh -c 'make && ./run > out.log 2>&1 &'",
      ),
    )
    .action(
      action(ctx, async (sessionId: string, command: string[], flags: ExecFlags) => {
        const out = outputOf(ctx.io, flags.json);
        const interrupt = interruptSignal(ctx.io);
        try {
          const sandbox = await ctx.api().connect(sessionId);
          const options = { ...runOptionsOf(flags), workingDir: flags.cwd };
          const input = { command: shellQuote(command) };
          return await streamRun(sandbox, input, options, ctx.io, out, interrupt.signal);
        } finally {
          interrupt.dispose();
        }
      }),
    );
}
