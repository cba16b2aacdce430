import { Command } from 'commander';
import type { Snapshot } from '@sandbox/sdk';
import { action, type Context } from '../context';
import { exitCodeOf } from '../exit-codes';
import { examples, jsonOption } from '../options';
import { errorLine, outputOf } from '../output';
import { PAGE_SIZE } from './ls';

/** `sandbox snapshot SID`: the session's files stored as a snapshot; its id on stdout. */
export function snapshotCommand(ctx: Context): Command {
  return new Command('snapshot')
    .summary("store a session's files as a snapshot; prints its id")
    .description(
      "Store a session's files (everything under /workspace) as a snapshot; the session runs " +
        "on. Prints the snapshot's id on stdout; 'sandbox create --snapshot ID' starts a new " +
        'session with those files. Processes are not kept (processesKept: false).',
    )
    .argument('<session>', 'session id (ses_…)')
    .option('--name <name>', 'a label of your own')
    .option('--processes', 'ask to keep the processes too (answered by processesKept)')
    .addOption(jsonOption('{snapshotId, sessionId, name, sizeBytes, processesKept, createdAt}'))
    .addHelpText(
      'after',
      examples('SNAP=$(sandbox snapshot ses_… --name base)', 'sandbox create --snapshot "$SNAP"'),
    )
    .action(
      action(
        ctx,
        async (
          sessionId: string,
          flags: { name?: string; processes?: boolean; json?: boolean },
        ) => {
          const sandbox = await ctx.api().connect(sessionId);
          const taken = await sandbox.snapshot({
            ...(flags.name === undefined ? {} : { name: flags.name }),
            ...(flags.processes === true ? { processes: true } : {}),
          });
          const out = outputOf(ctx.io, flags.json);
          out.print(taken, () => taken.snapshotId);
          if (!out.json) out.note(`${taken.sizeBytes} bytes stored`);
          return 0;
        },
      ),
    );
}

const line = (s: Snapshot) =>
  `${s.snapshotId}  ${String(s.sizeBytes).padStart(10)}  ${s.createdAt}  ${s.sessionId}  ${s.name ?? ''}`;

/** `sandbox snapshots ls|rm`: the account's snapshots. */
export function snapshotsCommand(ctx: Context): Command {
  const ls = new Command('ls')
    .summary("list the account's snapshots, newest first")
    .addOption(jsonOption('the snapshots (an array)'))
    .action(
      action(ctx, async (flags: { json?: boolean }) => {
        const snapshots = ctx.api().snapshots();
        const all: Snapshot[] = [];
        for (let offset = 0; ;) {
          const page = await snapshots.list({ limit: PAGE_SIZE, offset });
          all.push(...page.data);
          if (!page.pagination.hasMore || page.data.length === 0) break;
          offset += page.data.length;
        }
        const out = outputOf(ctx.io, flags.json);
        out.print(all, () => all.map(line));
        if (all.length === 0 && !out.json) out.note('no snapshots');
        return 0;
      }),
    );
  const rm = new Command('rm')
    .summary('delete snapshots and their stored files (ids already gone are no error)')
    .argument('<snapshot...>', 'snapshot ids (snap_…)')
    .action(
      action(ctx, async (ids: string[]) => {
        const snapshots = ctx.api().snapshots();
        let code = 0;
        for (const id of ids) {
          try {
            await snapshots.delete(id);
            ctx.io.stdout.write(`deleted ${id}\n`);
          } catch (error) {
            ctx.io.stderr.write(`${errorLine(error)} [${id}]\n`);
            if (code === 0) code = exitCodeOf(error);
          }
        }
        return code;
      }),
    );
  return new Command('snapshots')
    .summary("list or delete the account's snapshots")
    .addHelpText('after', examples('sandbox snapshots ls', 'sandbox snapshots rm snap_…'))
    .addCommand(ls)
    .addCommand(rm);
}
