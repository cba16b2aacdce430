import type { Command } from 'commander';
import type { ProcessRef, Sandbox } from '@sandbox/sdk';
import type { CliIo } from '../context';
import type { Context } from '../context';
import { processRef } from '../options';
import { writeTo } from '../output';
import { sessionCommand } from '../session-command';

interface LogsFlags {
  follow?: boolean;
  json?: boolean;
}

/** `sandbox logs SID PID`: a run's kept output, or followed live with -f. */
export function logsCommand(ctx: Context): Command {
  const spec = {
    name: 'logs',
    summary: "print a run's output, or follow it live (-f)",
    description:
      "Print a run's kept output: its stdout here, its stderr on stderr. With -f, follow it " +
      'live until the run ends (resumed if the connection drops).',
    json: 'the output ({stdout, stderr, …}; with -f, one event a line)',
    examples: ['sandbox logs ses_… 42', 'sandbox logs -f ses_… proc_…'],
    configure: (command: Command) =>
      command
        .argument('<process>', 'a pid, or a process id (proc_…)', processRef)
        .option('-f, --follow', 'follow the output live until the run ends'),
  };
  return sessionCommand<LogsFlags, [ProcessRef]>(ctx, spec, async ({ connect, flags }, ref) => {
    const sandbox = await connect();
    if (flags.follow === true) await follow(sandbox, ref, ctx.io, flags.json === true);
    else {
      const output = await sandbox.processes.output(ref);
      if (flags.json === true) ctx.io.stdout.write(`${JSON.stringify(output, null, 2)}\n`);
      else {
        await writeTo(ctx.io.stdout, output.stdout);
        await writeTo(ctx.io.stderr, output.stderr);
      }
    }
    return 0;
  });
}

async function follow(sandbox: Sandbox, ref: ProcessRef, io: CliIo, json: boolean) {
  for await (const event of sandbox.processes.follow(ref)) {
    if (json) await writeTo(io.stdout, `${JSON.stringify(event)}\n`);
    else if (event.type === 'stdout') await writeTo(io.stdout, event.data);
    else if (event.type === 'stderr') await writeTo(io.stderr, event.data);
    else if (event.type === 'gap') await writeTo(io.stderr, '[… output dropped at the cap …]\n');
  }
}
