import { Command, InvalidArgumentError, Option } from 'commander';
import { action, type Context } from '../context';
import { examples, jsonOption } from '../options';
import { outputOf } from '../output';

interface ForkFlags {
  count: number;
  filesOnly?: boolean;
  json?: boolean;
}

/** How many forks: an integer, 1 to 10. */
function forkCount(text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1 || n > 10) {
    throw new InvalidArgumentError('An integer from 1 to 10 is expected.');
  }
  return n;
}

/** `sandbox fork SID`: new sessions with a copy of its files; their ids on stdout (ADR 43). */
export function forkCommand(ctx: Context): Command {
  return new Command('fork')
    .summary('fork a session into new ones with a copy of its files; prints their ids')
    .description(
      'Fork a running session: each fork is a new session with a copy-on-write copy of its ' +
        'files as they are now (its runs go on), its limits, egress policy and metadata. ' +
        'Prints one id a line on stdout, each preview URL (and private-preview header) and ' +
        'whether the forks kept its processes on stderr. All or none: past the session limit, ' +
        'no fork is made.',
    )
    .argument('<session>', 'the session to fork (ses_…)')
    .option('--count <n>', 'how many forks, 1 to 10', forkCount, 1)
    .addOption(new Option('--files-only', "do not ask for the source's processes (only its files)"))
    .addOption(jsonOption('{sessions: [{sessionId, previewUrl, previewToken}], processesKept}'))
    .addHelpText(
      'after',
      examples(
        'sandbox fork ses_… --count 3',
        'for SID in $(sandbox fork ses_… --count 3); do …; done',
      ),
    )
    .action(
      action(ctx, async (sessionId: string, flags: ForkFlags) => {
        const source = await ctx.api().connect(sessionId);
        const forks = await source.fork({
          count: flags.count,
          processes: flags.filesOnly !== true,
        });
        const sessions = forks.map((fork) => ({
          sessionId: fork.id,
          previewUrl: fork.previewUrl(),
          ...(fork.previewToken === undefined ? {} : { previewToken: fork.previewToken }),
        }));
        const out = outputOf(ctx.io, flags.json);
        out.print({ sessions, processesKept: forks.processesKept }, () =>
          sessions.map((session) => session.sessionId),
        );
        if (out.json) return 0;
        for (const fork of forks) {
          out.note(`preview: ${fork.previewUrl()}`);
          for (const [name, value] of Object.entries(fork.previewHeaders())) {
            out.note(`preview header: ${name}: ${value}`);
          }
        }
        out.note(
          forks.processesKept
            ? "processes kept: the forks run the source's processes"
            : 'processes kept: no (files only: start their programs again)',
        );
        return 0;
      }),
    );
}
