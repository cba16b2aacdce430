import { Command } from 'commander';
import { action, type Context } from '../context';
import { examples, jsonOption } from '../options';
import { outputOf } from '../output';

/** `sandbox ps SID`: the session's runs. */
export function psCommand(ctx: Context): Command {
  return new Command('ps')
    .summary("list a session's runs")
    .description("List the session's runs, oldest first: pid, process id, state, command.")
    .argument('<session>', 'the session id (ses_…)')
    .addOption(jsonOption('the runs (an array)'))
    .addHelpText('after', examples('sandbox ps ses_…', 'sandbox ps ses_… | grep running'))
    .action(
      action(ctx, async (sessionId: string, flags: { json?: boolean }) => {
        const list = await (await ctx.api().connect(sessionId)).processes.list();
        const out = outputOf(ctx.io, flags.json);
        out.print(list, () =>
          list.map((p) => {
            const status = p.state === 'exited' ? `exited ${p.exitCode ?? ''}` : p.state;
            return `${String(p.pid).padStart(7)}  ${p.id}  ${status.padEnd(10)}  ${p.command}`;
          }),
        );
        if (list.length === 0 && !out.json) out.note('no runs');
        return 0;
      }),
    );
}
