import type { Command } from 'commander';
import type { FileChangeEvent } from '@sandbox/sdk';
import type { Context } from '../context';
import { OUTCOMES } from '../exit-codes';
import { writeTo } from '../output';
import { interruptSignal } from '../run-stream';
import { sessionCommand } from '../session-command';

interface WatchFlags {
  recursive?: boolean;
  json?: boolean;
}

/** One change, for people: `create  src/a.ts`, `rename  old -> new`, a directory with `/`. */
export function changeLine(event: FileChangeEvent): string {
  const slash = event.isDirectory ? '/' : '';
  const from = event.oldPath === undefined ? '' : `${event.oldPath}${slash} -> `;
  return `${event.change.padEnd(6)}  ${from}${event.path}${slash}\n`;
}

/** `sandbox watch SID [DIR]`: a directory's changes as they happen (ADR 60). */
export function watchCommand(ctx: Context): Command {
  const spec = {
    name: 'watch',
    summary: "print a directory's changes as they happen",
    description:
      'Print the changes under DIR (default /workspace) as they happen, one a line: create, ' +
      'write, remove, rename (OLD -> NEW); a directory ends with /. -r covers the directories ' +
      'under it too. Runs until Ctrl-C (exit 130), or until the directory (0) or the session ' +
      '(1: deleted, or gone to deep sleep) goes.',
    json: 'one event a line: {type: "change", change, path, oldPath?, isDirectory} or {type: "overflow"}',
    examples: ['sandbox watch ses_… src -r', "sandbox watch ses_… --json | jq -r '.path'"],
    configure: (command: Command) =>
      command
        .argument('[dir]', 'a directory, relative to /workspace')
        .option('-r, --recursive', 'the directories under it too'),
  };
  return sessionCommand<WatchFlags, [string | undefined]>(
    ctx,
    spec,
    async ({ connect, flags, out }, dir) => {
      const sandbox = await connect();
      const interrupt = interruptSignal(ctx.io);
      try {
        const watch = await sandbox.files.watch(dir, {
          recursive: flags.recursive === true,
          signal: interrupt.signal,
        });
        out.note(`watching ${dir ?? '/workspace'} (${watch.directories} directories)`);
        for await (const event of watch) {
          if (flags.json === true) await writeTo(ctx.io.stdout, `${JSON.stringify(event)}\n`);
          else if (event.type === 'change') await writeTo(ctx.io.stdout, changeLine(event));
          else out.note('sandbox: changes were lost (too many at once): list the directory again');
        }
        if (interrupt.signal.aborted) return OUTCOMES.interrupted.code;
        if (watch.ended === 'removed') out.note('sandbox: the directory was removed');
        if (watch.ended !== 'stopped') return 0;
        out.note('sandbox: the session went away (deleted, or gone to deep sleep)');
        return 1;
      } finally {
        interrupt.dispose();
      }
    },
  );
}
