import type { Command } from 'commander';
import type { KillResult, ProcessRef, Sandbox } from '@sandbox/sdk';
import { UsageError, type Context } from '../context';
import { processRef } from '../options';
import type { Output } from '../output';
import { sessionCommand } from '../session-command';

/**
 * Kills one process of the session: a pid directly; a process id by its pid, only while that
 * run is still running (its pid may belong to another process once it ended).
 */
export async function killOne(sandbox: Sandbox, ref: ProcessRef, out: Output): Promise<KillResult> {
  if (typeof ref === 'number') return sandbox.processes.kill(ref);
  const run = await sandbox.processes.get(ref);
  if (run.state === 'running') return sandbox.processes.kill(run.pid);
  if (!out.json) out.note(`sandbox: ${ref} is not running (${run.state})`);
  return { killed: 0, pids: [] };
}

/** `sandbox kill SID PID|proc_ID`, or `--all`. */
export function killCommand(ctx: Context): Command {
  const spec = {
    name: 'kill',
    summary: 'kill a process of a session, or all of them (--all)',
    description:
      'Kill one process of the session (and its children), by its pid or its process id; ' +
      'or with --all every process of the session.',
    json: '{killed, pids}',
    examples: ['sandbox kill ses_… 42', 'sandbox kill ses_… proc_…', 'sandbox kill ses_… --all'],
    configure: (command: Command) =>
      command
        .argument('[process]', 'a pid, or a process id (proc_…)', processRef)
        .option('--all', 'kill every process of the session'),
  };
  return sessionCommand<{ all?: boolean; json?: boolean }, [ProcessRef | undefined]>(
    ctx,
    spec,
    async ({ connect, out, flags }, ref) => {
      if (ref === undefined && flags.all !== true) {
        throw new UsageError('kill needs a process (a pid or a proc_ id), or --all');
      }
      if (ref !== undefined && flags.all === true) {
        throw new UsageError('kill takes a process or --all, not both');
      }
      const sandbox = await connect();
      const killed =
        ref === undefined ? await sandbox.processes.killAll() : await killOne(sandbox, ref, out);
      out.print(killed, () =>
        killed.pids.length === 0
          ? `killed ${killed.killed}`
          : `killed ${killed.killed}: ${killed.pids.join(' ')}`,
      );
      return 0;
    },
  );
}
