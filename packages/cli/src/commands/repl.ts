import { Command, Option } from 'commander';
import { ContextNotFoundError, type CodeContext, type Sandbox } from '@sandbox/sdk';
import { action, type Context } from '../context';
import { envPair, examples, positiveNumber, secondsToMs } from '../options';
import { CellRepl } from '../repl-session';

interface ReplFlags {
  context?: string;
  language?: 'typescript' | 'javascript' | 'bash';
  cwd?: string;
  env?: Record<string, string>;
  timeout?: number;
  keep?: boolean;
}

/** `sandbox repl SID`: an interactive REPL on a code context, new or attached. */
export function replCommand(ctx: Context): Command {
  return new Command('repl')
    .summary('an interactive TypeScript/JavaScript REPL on a code context, or a shell on one')
    .description(
      'An interactive REPL on a code context of the session: what an entry declares stays for ' +
        'the next, the last expression is printed, top-level await and imports (installed on ' +
        'first use) work. A new context is made for it and deleted when it ends (kept with ' +
        '--keep); --context attaches to one that exists, and leaves it. An entry cut short (an ' +
        'open brace, bracket or parenthesis, a trailing operator) continues on the next line. ' +
        'Values a terminal cannot show (HTML, images) are named with their size. Ctrl-C stops ' +
        'a running entry (its context then restarts, empty) or clears the line; Ctrl-D or ' +
        '.exit leaves; .restart empties the context; .help lists the commands. History is kept ' +
        'in $SANDBOX_REPL_HISTORY (empty: not kept), default ' +
        '$XDG_CONFIG_HOME/sandbox/repl_history (~/.config/sandbox/repl_history). With ' +
        '--language bash the context is a shell context: each line is a command run in one ' +
        'bash that keeps its directory, variables and functions.',
    )
    .argument('<session>', 'the session id (ses_…)')
    .option('--context <id>', 'attach to this context (ctx_…) instead of making one')
    .addOption(
      new Option('--language <language>', "the new context's language (default: typescript)")
        .choices(['typescript', 'javascript', 'bash'])
        .conflicts('context'),
    )
    .addOption(
      new Option('--cwd <dir>', "the new context's directory, relative to /workspace").conflicts(
        'context',
      ),
    )
    .addOption(
      new Option('--env <name=value>', "a variable of the new context's environment (repeatable)")
        .argParser(envPair)
        .conflicts('context'),
    )
    .option(
      '--timeout <seconds>',
      "each entry's timeout: stopped after it, the variables kept (default: the session's, 30)",
      positiveNumber,
    )
    .addOption(
      new Option('--keep', 'keep the new context when the REPL ends (its id on stderr)').conflicts(
        'context',
      ),
    )
    .addHelpText(
      'after',
      examples(
        'sandbox repl ses_…',
        'sandbox repl --language javascript --cwd app ses_…',
        'sandbox repl --language bash ses_…',
        'sandbox repl --context ctx_… ses_…',
      ),
    )
    .action(
      action(ctx, async (sessionId: string, flags: ReplFlags) => {
        const sandbox = await ctx.api().connect(sessionId);
        const context = await contextFor(sandbox, flags);
        ctx.io.stderr.write(
          `Context ${context.contextId} (${context.language}, ${context.cwd}) in ${sessionId}. ` +
            '.help for commands, Ctrl-D or .exit to leave.\n',
        );
        try {
          const repl = new CellRepl(sandbox, context, ctx.io, {
            timeoutMs: secondsToMs(flags.timeout),
          });
          return await repl.run();
        } finally {
          if (flags.context !== undefined || flags.keep === true) {
            if (flags.keep === true) ctx.io.stderr.write(`sandbox: kept ${context.contextId}\n`);
          } else {
            await sandbox.contexts.delete(context.contextId).catch(() => undefined);
          }
        }
      }),
    );
}

/** The context of `--context` (ContextNotFoundError if the session has none so), or a new one. */
async function contextFor(sandbox: Sandbox, flags: ReplFlags): Promise<CodeContext> {
  if (flags.context === undefined) {
    return sandbox.createContext({ language: flags.language, cwd: flags.cwd, env: flags.env });
  }
  const found = (await sandbox.contexts.list()).find((c) => c.contextId === flags.context);
  if (found !== undefined) return found;
  throw new ContextNotFoundError({
    code: 'context_not_found',
    status: 404,
    message: `The session has no context ${flags.context}`,
  });
}
