// bench:load's row of `echo` in shell contexts (ADR 59), beside its `command` rows and the floor.
import { machineBusyMs, row } from './lib.mjs';
import { closedLoopOf } from './timing.mjs';

/**
 * The same `echo` runs as commands in a shell context of each session (ADR 59): one bash per
 * session that runs them all, where a command run has a bash of its own. Beside the floor, with
 * the machine's CPU per run counted the same way.
 */
export async function shellEchoes(stack, ids, runsEach) {
  const sessions = ids.length;
  const contexts = await Promise.all(
    ids.map(
      async (id) =>
        JSON.parse(await stack.api(`/sessions/${id}/contexts`, { language: 'bash' })).contextId,
    ),
  );
  if (contexts.some((id) => typeof id !== 'string')) throw new Error('a shell context was refused');
  // One client a session: a context runs one command at a time.
  const echo = (k) =>
    stack.api('/execute', { sessionId: ids[k], contextId: contexts[k], command: 'echo hi' });
  const clients = ids.map((_, k) => k);
  await Promise.all(clients.map(echo)); // each shell's first command
  const busy = machineBusyMs();
  const { times, seconds } = await closedLoopOf(clients, sessions * runsEach, echo);
  const cpuMsPerRun = (machineBusyMs() - busy) / times.length;
  const measured = row(
    `${sessions} sessions running echo in a shell context each (ADR 59; ${runsEach} each)`,
    times.length,
    times,
    {
      perSecond: times.length / seconds,
      cpuMsPerRun,
      note: `opt-in: the command runs in the shell, which keeps its state; ${cpuMsPerRun.toFixed(2)} ms of the machine's CPU per run`,
    },
  );
  return measured;
}
