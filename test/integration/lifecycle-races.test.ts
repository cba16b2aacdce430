import { createDockerRuntime, type DockerRuntime } from '@sandbox/agent';
import { docker, MANUAL_SWEEPS, sessionContainerNow } from '../support/stack';
import { StreamedRun } from '../support/streamed-run';
import { useStackWithAccount } from '../support/use-stack';

/**
 * A transition never lands on a session in use (issue 17): the node has the last word on a
 * pause or a deep sleep, and refuses while it serves a request of the session, or served one
 * within the delay. Each test makes the gateway's record say the session is due, as a record
 * that a request in flight or one that overtook the decision has not reached yet would.
 */
let runtime: DockerRuntime | undefined;
const t = useStackWithAccount('paid', {
  stack: {
    gatewayEnv: { SESSION_IDLE_AFTER_S: '1', SESSION_DEEP_SLEEP_AFTER_S: '2', ...MANUAL_SWEEPS },
    runtime: (config, logger) => (runtime = createDockerRuntime({ config, logger })),
  },
});

const sweep = () => t.stack.gateways[0]!.sweeper.sweep();
const state = async (id: string) => (await t.api.session<{ state: string }>(id)).body.state;

/** The gateway's record says the session's last request was `ago` (an SQL interval) ago. */
async function recordOld(sessionId: string, ago: string): Promise<void> {
  await t.stack.gateways[0]!.db.query(
    `UPDATE sessions SET last_active_at = now() - $2::interval WHERE id = $1`,
    [sessionId, ago],
  );
}

/**
 * A streamed run that prints `started`, then waits until the test lets it end (`finish`) and
 * prints the file: it is still under way whenever the sweep reaches the node, however slow the
 * machine (a run of a fixed second could end, and its delay pass, before a loaded sweep came).
 */
async function longRun(sessionId: string): Promise<StreamedRun> {
  const response = await t.api.executeStream(sessionId, {
    command: 'echo started; until [ -e go ]; do sleep 0.05; done; cat kept.txt',
  });
  const run = new StreamedRun(response);
  await run.untilStdout('started');
  return run;
}

/**
 * Lets `longRun`'s run end (its file made by `docker exec`, not through the API, which would
 * count as the session's activity), and waits for its end.
 */
async function finish(sessionId: string, run: StreamedRun): Promise<void> {
  const container = await sessionContainerNow(sessionId);
  const exec = await docker
    .getContainer(container!.Id)
    .exec({ Cmd: ['touch', '/workspace/go'], User: '1000' });
  const stream = await exec.start({});
  await new Promise((resolve) => stream.on('end', resolve).resume());
  await run.rest();
}

it('leaves a session to the run under way when its deep sleep is due', async () => {
  const id = await t.api.createSession();
  await t.api.writeFile(id, 'kept.txt', 'kept');
  const run = await longRun(id);
  await recordOld(id, '1 hour');
  expect((await sweep()).slept).not.toContain(id);
  await finish(id, run);
  const result = run.events().at(-1);
  expect(result?.event).toBe('result');
  expect(result?.data).toMatchObject({ stdout: 'started\nkept', exitCode: 0 });
  expect(await state(id)).toBe('active');
  // The refusal counts as activity: not due again at once.
  expect((await sweep()).slept).not.toContain(id);
});

it('does not freeze a run under way when its pause is due', async () => {
  const id = await t.api.createSession();
  await t.api.writeFile(id, 'kept.txt', 'kept');
  const run = await longRun(id);
  // Past the idle delay (1 s), not the deep-sleep one (2 s).
  await recordOld(id, '1.5 seconds');
  const started = Date.now();
  // Only this session's fate: the one before it may be idle by now on a busy machine.
  expect((await sweep()).idled).not.toContain(id);
  await finish(id, run);
  expect(run.events().at(-1)?.event).toBe('result');
  expect(Date.now() - started).toBeLessThan(5000);
  expect(await state(id)).toBe('active');
});

it('wakes a session whose deep sleep overtook a request that saw it awake', async () => {
  const id = await t.api.createSession();
  await t.api.writeFile(id, 'kept.txt', 'kept');
  // The node saves and removes the sandbox while the gateway still records it active.
  await new Promise((resolve) => setTimeout(resolve, 50));
  const saved = await runtime!.hibernate(id);
  expect(saved.inUse).toBe(false);
  expect(await state(id)).toBe('active');
  const read = await t.api.execute<{ stdout: string }>(id, { command: 'cat kept.txt' });
  expect(read.status).toBe(200);
  expect(read.body.stdout).toBe('kept');
});
