import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { access, readdir } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { loadGatewayConfig } from '@sandbox/config';
import { startGateway, type RunningGateway } from '@sandbox/gateway';
import { createLogger } from '@sandbox/logger';
import { call, createAccount, createSession, type TestAccount } from '../support/api';
import { requiredEnv, SANDBOX_IMAGE } from '../support/env';
import { closedPort } from '../support/net';
import {
  MANUAL_SWEEPS,
  docker,
  removeNodeSandboxes,
  sessionContainerNow,
  testWorkspaceDir,
  type TestStack,
} from '../support/stack';
import { parseEvents, StreamedRun } from '../support/streamed-run';
import { ApiClient } from '../support/api-client';

/**
 * The agent process is killed (SIGKILL to its whole process group, tar included) in the middle
 * of saving a workspace for deep sleep and in the middle of restoring one; after a restart
 * every file is back, byte for byte, and the request that woke the session is served.
 */

const nodeId = `crash-${randomBytes(4).toString('hex')}`;
const internalToken = randomBytes(16).toString('hex');
const adminToken = randomBytes(16).toString('hex');
const schema = `crash_${randomBytes(4).toString('hex')}`;
const workspaceDir = testWorkspaceDir(nodeId);
const blobDir = `${workspaceDir}-blobs`;
let agentPort: number;
let previewPort: number;
let agent: ChildProcess | undefined;
let gateway: RunningGateway;
let account: TestAccount;
const logger = createLogger({ name: 'test', level: process.env.TEST_LOG_LEVEL ?? 'silent' });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(check: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

/** The real agent program, in its own process group (so a kill takes its children too). */
async function startAgentProcess(image = SANDBOX_IMAGE): Promise<void> {
  agent = spawn(process.execPath, [join(__dirname, '../../services/agent/dist/main.js')], {
    detached: true,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      PATH: process.env.PATH,
      AGENT_HOST: '127.0.0.1',
      AGENT_PORT: String(agentPort),
      AGENT_PREVIEW_PORT: String(previewPort),
      NODE_ID: nodeId,
      INTERNAL_TOKEN: internalToken,
      SANDBOX_IMAGE: image,
      SANDBOX_WORKSPACE_DIR: workspaceDir,
      PACKAGE_CACHE_DIR: `${workspaceDir}-packages`,
      BLOB_STORE_DIR: blobDir,
      LOG_LEVEL: 'error',
    },
  });
  await waitFor(() => listening(agentPort), 30_000, 'the agent to listen');
}

function killAgent(): void {
  if (agent?.pid !== undefined) process.kill(-agent.pid, 'SIGKILL');
  agent = undefined;
}

beforeAll(async () => {
  agentPort = await closedPort();
  previewPort = await closedPort();
  await startAgentProcess();
  gateway = await startGateway({
    config: loadGatewayConfig({
      GATEWAY_PORT: '0',
      DATABASE_URL: requiredEnv('TEST_DATABASE_URL'),
      REDIS_URL: requiredEnv('TEST_REDIS_URL'),
      AGENT_NODES: `${nodeId}=127.0.0.1:${agentPort}`,
      INTERNAL_TOKEN: internalToken,
      ADMIN_TOKEN: adminToken,
      SESSION_IDLE_AFTER_S: '1',
      SESSION_DEEP_SLEEP_AFTER_S: '2',
      // The test drives the passes itself.
      ...MANUAL_SWEEPS,
    }),
    logger,
    schema,
  });
  account = await createAccount({ url: gateway.url, adminToken } as TestStack);
});

afterAll(async () => {
  await gateway?.db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
  await gateway?.stop();
  killAgent();
  await removeNodeSandboxes(nodeId);
  // A create the killed agent had sent can still be finished by dockerd after the first sweep
  // (a container of this node was once left behind, never started): sweep once more.
  await sleep(1_000);
  await removeNodeSandboxes(nodeId);
  await docker
    .getImage(OLDER_IMAGE)
    .remove()
    .catch(() => undefined);
});

const FINGERPRINT = 'find . -type f -print0 | sort -z | xargs -0 sha256sum';
/** An image other than the test's, standing for one made before an upgrade (ADR 47). */
const OLDER_IMAGE = `sbx-older-${nodeId}:latest`;

const execute = (sessionId: string, command: string) =>
  call<{ stdout: string; exitCode: number }>(`${gateway.url}/v1/execute`, {
    method: 'POST',
    key: account.key,
    body: { sessionId, command },
  });

/** A session whose workspace takes a while to archive (random data does not compress). */
/** The big file of a session's workspace: its unpacking takes long enough to be caught in the middle. */
const BIG_BYTES = 150_000_000;

async function sessionWithBigWorkspace(): Promise<{ id: string; fingerprint: string }> {
  const id = await createSession(gateway.url, account.key);
  const made = await execute(
    id,
    `head -c ${BIG_BYTES} /dev/urandom > big.bin && mkdir -p src/deep && echo "export const a = 1" > src/deep/a.ts && ` +
      'head -c 100000 /dev/urandom > src/small.bin && : > empty && ' +
      FINGERPRINT,
  );
  expect(made.body.exitCode).toBe(0);
  expect(made.body.stdout.split('\n').filter(Boolean)).toHaveLength(4);
  return { id, fingerprint: made.body.stdout };
}

const state = async (id: string) =>
  (await call<{ state: string }>(`${gateway.url}/v1/sessions/${id}`, { key: account.key })).body
    .state;

it('keeps every byte when the agent dies in the middle of a deep-sleep save', async () => {
  const { id, fingerprint } = await sessionWithBigWorkspace();
  await sleep(2200);
  const sweep = gateway.sweeper.sweep();
  await waitFor(
    () => exists(join(blobDir, '.staging', `${id}.save.tar.zst`)),
    20_000,
    'the save to start',
  );
  killAgent();
  const { slept } = await sweep;
  expect(slept).not.toContain(id);
  expect(await exists(join(blobDir, `${id}.json`))).toBe(false);

  await startAgentProcess();
  const after = await execute(id, FINGERPRINT);
  expect([after.status, after.body.stdout]).toEqual([200, fingerprint]);
  expect(await state(id)).toBe('active');
});

it('serves the request that woke a session, every byte back, when the agent restarts mid-wake', async () => {
  const { id, fingerprint } = await sessionWithBigWorkspace();
  await sleep(2200);
  expect((await gateway.sweeper.sweep()).slept).toContain(id);
  expect(await state(id)).toBe('deep-sleep');

  const wake = execute(id, FINGERPRINT);
  // The restore unpacks into a scratch directory of a warm pool member's disk (or, without
  // one, the session's), then moves it into place: the kill comes while it unpacks, so that
  // the wake is surely still in flight.
  const restoring = async () => {
    const slots = (await readdir(workspaceDir)).filter((s) => s === id || s.startsWith('pool-'));
    for (const slot of slots) {
      const inSlot = await readdir(join(workspaceDir, slot)).catch(() => []);
      if (inSlot.some((name) => name.startsWith('.restoring-'))) return true;
    }
    return false;
  };
  await waitFor(restoring, 20_000, 'the restore to start');
  killAgent();
  await sleep(500);
  expect(await state(id)).toBe('deep-sleep'); // no transition while the wake is in flight
  await startAgentProcess();

  // The gateway asks the restarted agent again: the waking request itself is served.
  const woken = await wake;
  expect([woken.status, woken.body.stdout]).toEqual([200, fingerprint]);
  expect(await state(id)).toBe('active');
  // The saved copy goes only once the woken sandbox runs.
  expect(await exists(join(blobDir, `${id}.json`))).toBe(false);
});

it('ends a streamed run with a terminal error event, not a cut, when the agent dies mid-stream', async () => {
  const id = await createSession(gateway.url, account.key);
  const response = await new ApiClient(gateway, account.key).executeStream(id, {
    command: 'echo first; sleep 30',
  });
  expect(response.status).toBe(200);
  const stream = new StreamedRun(response);
  await stream.until('first');
  killAgent();
  await stream.rest();
  const last = stream.events().at(-1);
  expect(last?.event).toBe('error');
  expect(last?.data).toMatchObject({ code: 'service_unavailable' });
  await startAgentProcess();
  // The restarted node knows the run as lost, its output up to then kept; a resume says so.
  const client = new ApiClient(gateway, account.key);
  const list = () =>
    client.get<{ processes: { state: string; id: string }[] }>(`/v1/sessions/${id}/processes`);
  // Until the gateway reaches the node again it answers 503 with Retry-After, as documented: a
  // client retries. (A CI run listed at once, and read that 503 as the answer.)
  let listed = await list();
  for (const deadline = Date.now() + 20_000; listed.status === 503 && Date.now() < deadline;) {
    await sleep(100);
    listed = await list();
  }
  expect(listed.status).toBe(200);
  const run = listed.body.processes.at(-1);
  expect(run).toMatchObject({ state: 'lost' });
  const output = await client.get<{ stdout: string }>(
    `/v1/sessions/${id}/processes/${run?.id}/output`,
  );
  expect(output.body.stdout).toBe('first\n');
  const lastOutput = stream
    .events()
    .filter((e) => e.event === 'stdout')
    .at(-1);
  const resumed = parseEvents(
    await (
      await client.executeStream(id, {}, undefined, { 'last-event-id': lastOutput?.id ?? '' })
    ).text(),
  );
  expect(resumed.map((e) => e.event)).toEqual(['error']);
});

it('recreates at its start a sandbox of another image on its own, every file kept', async () => {
  // The test's image with one more label: another image id, the same runner.
  const base = await docker.createContainer({ Image: SANDBOX_IMAGE });
  const [repo, tag] = OLDER_IMAGE.split(':');
  await base.commit({ repo, tag, changes: 'LABEL io.sandbox.test=older' });
  await base.remove();
  const olderId = (await docker.getImage(OLDER_IMAGE).inspect()).Id;
  const currentId = (await docker.getImage(SANDBOX_IMAGE).inspect()).Id;
  killAgent();
  await startAgentProcess(OLDER_IMAGE);
  // The gateway finds the restarted node again within a few seconds.
  let id = '';
  for (let tries = 0; id === '' && tries < 40; tries += 1) {
    id = await createSession(gateway.url, account.key).catch(() => '');
    if (id === '') await sleep(500);
  }
  const made = await execute(
    id,
    `echo kept > kept.txt; (nohup sleep 600 >/dev/null 2>&1 &); ${FINGERPRINT}`,
  );
  expect(made.body.exitCode).toBe(0);
  const before = await sessionContainerNow(id);
  expect(before?.ImageID).toBe(olderId);

  // An upgrade: the agent comes back with another image, the old sandbox still running.
  killAgent();
  await startAgentProcess();
  await waitFor(
    async () => (await sessionContainerNow(id))?.ImageID === currentId,
    30_000,
    'the sandbox to be recreated on the current image',
  );
  const after = await sessionContainerNow(id);
  expect(after?.Id).not.toBe(before?.Id);
  const again = await execute(id, `${FINGERPRINT}; pgrep -fx "sleep 600" || echo none`);
  expect([again.status, again.body.stdout]).toEqual([200, `${made.body.stdout}none\n`]);
});
