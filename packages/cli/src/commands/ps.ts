import type { Command } from 'commander';
import type { Context } from '../context';
import { sessionCommand } from '../session-command';

/** `sandbox ps SID`: the session's runs. */
export function psCommand(ctx: Context): Command {
  const spec = {
    name: 'ps',
    summary: "list a session's runs",
    description: "List the session's runs, oldest first: pid, process id, state, command.",
    json: 'the runs (an array)',
    examples: ['sandbox ps ses_…', 'sandbox ps ses_… | grep running'],
  };
  return sessionCommand(ctx, spec, async ({ connect, out }) => {
    const list = await (await connect()).processes.list();
    out.print(list, () =>
      list.map((p) => {
        const status = p.state === 'exited' ? `exited ${p.exitCode ?? ''}` : p.state;
        return `${String(p.pid).padStart(7)}  ${p.id}  ${status.padEnd(10)}  ${p.command}`;
      }),
    );
    if (list.length === 0 && !out.json) out.note('no runs');
    return 0;
  });
}
