import { InvalidArgumentError, Option, type Command } from 'commander';
import type { Context } from '../context';
import { sessionCommand } from '../session-command';

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
  const spec = {
    name: 'fork',
    summary: 'fork a session into new ones with a copy of its files; prints their ids',
    description:
      'Fork a running session: each fork is a new session with a copy-on-write copy of its ' +
      'files as they are now (its runs go on), its limits, egress policy and metadata. ' +
      'Prints one id a line on stdout, each preview URL (and private-preview header) and ' +
      'whether the forks kept its processes on stderr. All or none: past the session limit, ' +
      'no fork is made.',
    json: '{sessions: [{sessionId, previewUrl, previewToken}], processesKept}',
    examples: [
      'sandbox fork ses_… --count 3',
      'for SID in $(sandbox fork ses_… --count 3); do …; done',
    ],
    configure: (command: Command) =>
      command
        .option('--count <n>', 'how many forks, 1 to 10', forkCount, 1)
        .addOption(
          new Option('--files-only', "do not ask for the source's processes (only its files)"),
        ),
  };
  return sessionCommand<ForkFlags>(ctx, spec, async ({ connect, out, flags }) => {
    const forks = await (
      await connect()
    ).fork({
      count: flags.count,
      processes: flags.filesOnly !== true,
    });
    const sessions = forks.map((fork) => ({
      sessionId: fork.id,
      previewUrl: fork.previewUrl(),
      ...(fork.previewToken === undefined ? {} : { previewToken: fork.previewToken }),
    }));
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
  });
}
