import { previewRequest, startPreviewApp } from '../support/preview-app';
import { docker, MANUAL_SWEEPS, sessionContainer, sessionContainerNow } from '../support/stack';
import { useStackWithAccount } from '../support/use-stack';

/** Spec part 3 with short delays: active → idle → deep sleep → active, nothing lost. */

const t = useStackWithAccount('free', {
  stack: {
    edge: true,
    gatewayEnv: {
      SESSION_IDLE_AFTER_S: '1',
      SESSION_DEEP_SLEEP_AFTER_S: '2',
      // The test drives the passes itself.
      ...MANUAL_SWEEPS,
    },
  },
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const sweep = () => t.stack.gateways[0]!.sweeper.sweep();
const info = (id: string) =>
  t.api.session<{ state: string; filesCount: number; lastActive: string; activeProcesses: number }>(
    id,
  );
const execute = (sessionId: string, command: string) =>
  t.api.execute<{ stdout: string }>(sessionId, { command });
const container = async (id: string) => {
  const found = await sessionContainer(id);
  return found === undefined ? undefined : docker.getContainer(found.Id).inspect();
};

/** A preview visit through the edge proxy. */
const visit = async (sessionId: string, path: string) => {
  const { status, body } = await previewRequest(
    t.stack.edge?.url ?? '',
    `${sessionId.replace('_', '-')}.preview.test`,
    path,
  );
  return { status, body };
};

const FINGERPRINT = 'find . -type f -print0 | sort -z | xargs -0 sha256sum';

it('goes idle, then to deep sleep, and wakes on requests with every byte intact', async () => {
  const id = await t.api.createSession();
  await execute(
    id,
    'mkdir -p d && for i in $(seq 1 20); do head -c $((i * 1000)) /dev/urandom > d/f$i; done; nohup sleep 600 >/dev/null 2>&1 &',
  );
  const before = (await execute(id, FINGERPRINT)).body.stdout;

  // Idle: paused; reading info does not wake it nor count as activity.
  await sleep(1200);
  expect((await sweep()).idled).toEqual([id]);
  const idle = await info(id);
  expect(idle.body).toMatchObject({ state: 'idle', filesCount: 20, activeProcesses: 1 });
  expect((await container(id))?.State.Paused).toBe(true);
  expect((await info(id)).body.lastActive).toBe(idle.body.lastActive);

  // A request wakes it at once; its processes were frozen, not ended.
  expect((await execute(id, 'pgrep -f "sleep 60[0]" >/dev/null && echo alive')).body.stdout).toBe(
    'alive\n',
  );
  expect((await info(id)).body.state).toBe('active');

  // Deep sleep after its own delay: saved, the container removed.
  await sleep(2200);
  expect((await sweep()).slept).toEqual([id]);
  expect((await info(id)).body).toMatchObject({
    state: 'deep-sleep',
    filesCount: 20,
    activeProcesses: 0,
  });
  expect(await sessionContainerNow(id)).toBeUndefined();

  // Any request restores it: files identical, processes gone.
  expect((await execute(id, FINGERPRINT)).body.stdout).toBe(before);
  expect((await info(id)).body.state).toBe('active');
  expect((await execute(id, 'pgrep -f "sleep 60[0]" || echo gone')).body.stdout).toBe('gone\n');
});

it('wakes on a preview visit through the edge proxy and on file requests', async () => {
  const id = await t.api.createSession();
  await startPreviewApp(t.stack.url, t.account.key, id);
  await t.api.writeFile(id, 'keep.txt', 'kept');

  // Idle: the app is frozen; a visit thaws it and it answers.
  await sleep(1200);
  expect((await sweep()).idled).toContain(id);
  expect((await container(id))?.State.Paused).toBe(true);
  expect(await visit(id, '/api')).toEqual({ status: 200, body: 'api ok on port 3000' });
  expect((await info(id)).body.state).toBe('active');

  // Deep sleep: a visit wakes the session (its files back, its processes not: 502 page until
  // the app is started again).
  await sleep(2200);
  expect((await sweep()).slept).toContain(id);
  expect(await sessionContainerNow(id)).toBeUndefined();
  expect((await visit(id, '/api')).status).toBe(502);
  expect((await info(id)).body.state).toBe('active');
  expect((await container(id))?.State.Running).toBe(true);
  await startPreviewApp(t.stack.url, t.account.key, id);
  expect(await visit(id, '/api')).toEqual({ status: 200, body: 'api ok on port 3000' });

  await sleep(2200);
  expect((await sweep()).slept).toContain(id);
  const read = await t.api.readFile(id, 'keep.txt');
  expect(await read.text()).toBe('kept');
});

it('recovers when a gateway died between marking deep sleep and saving', async () => {
  const id = await t.api.createSession();
  const before = (await execute(id, `head -c 200000 /dev/urandom > r.bin; ${FINGERPRINT}`)).body
    .stdout;
  await sleep(2200);
  // What the dead gateway left: the row in deep sleep (unconfirmed, leased), the sandbox as it
  // was (paused here, as an idle one would be).
  await t.stack.gateways[0]!.db.query(
    `UPDATE sessions SET state = 'deep-sleep', lifecycle_lease_until = now() + interval '10 minutes'
      WHERE id = $1`,
    [id],
  );
  await docker.getContainer((await container(id))!.Id).pause();
  expect((await execute(id, FINGERPRINT)).body.stdout).toBe(before);
  expect((await info(id)).body.state).toBe('active');
});

it('deletes a sleeping session with its saved files', async () => {
  const id = await t.api.createSession();
  await sleep(2200);
  expect((await sweep()).slept).toContain(id);
  expect((await t.api.deleteSession(id)).status).toBe(200);
  expect((await info(id)).status).toBe(404);
});
