import { containerProcesses } from '../support/stack';
import { StreamedRun } from '../support/streamed-run';
import { useStackWithAccount } from '../support/use-stack';

/**
 * The sandbox's runner killed from outside (SIGKILL from the host) in the middle of a run:
 * the run's stream ends with an error event, the run's own command does not live on (its
 * spawner hangs it up, as a closing terminal would), a `nohup`ed process does, and the next
 * request gets a new runner.
 */
const t = useStackWithAccount('paid');

/** The host pid of the session's runner. */
async function runnerHostPid(sessionId: string): Promise<number> {
  const runner = (await containerProcesses(t.stack.nodeId, sessionId)).find((p) =>
    /^node (--no-memory-reducer )?\/opt\/sandbox\/runner\/main\.js$/.test(p.args),
  );
  if (runner === undefined) throw new Error('no runner in the container');
  return runner.pid;
}

it('ends the run with an error event when its runner is killed, hangs up its command, spares nohup', async () => {
  const sessionId = await t.api.createSession();
  const response = await t.api.executeStream(sessionId, {
    command: 'nohup sleep 300 >/dev/null 2>&1 & sleep 0.3; echo started; sleep 299',
  });
  expect(response.status).toBe(200);
  const stream = new StreamedRun(response);
  await stream.untilStdout('started');
  process.kill(await runnerHostPid(sessionId), 'SIGKILL');
  await stream.rest();
  expect(stream.events().at(-1)?.event).toBe('error');

  await new Promise((resolve) => setTimeout(resolve, 1000));
  const after = await t.api.execute<{ stdout: string }>(sessionId, {
    command: 'ps -eo stat=,args=',
  });
  expect(after.status).toBe(200);
  const processes = after.body.stdout.trim().split('\n');
  expect(processes.filter((p) => p.includes('sleep 299'))).toEqual([]);
  expect(processes.filter((p) => p.includes('sleep 300'))).toHaveLength(1);
  expect(processes.filter((p) => p.startsWith('T'))).toEqual([]);
});
