import { execFile } from 'node:child_process';
import { access } from 'node:fs/promises';
import { promisify } from 'node:util';
import { createDockerRuntime, type DockerRuntime } from '@sandbox/agent';
import { call, createAccount, createSession, type TestAccount } from '../support/api';
import {
  docker,
  sessionContainer,
  sessionContainerNow,
  startStack,
  testWorkspaceDir,
  type TestStack,
} from '../support/stack';

/**
 * The agent brings sandboxes back by itself (desired state vs actual state): after a reboot
 * (containers stopped, disks unmounted) and when a container vanished behind its back, on the
 * next request or its periodic reconcile, with every byte of the workspace intact.
 */

const run = promisify(execFile);
let stack: TestStack;
let account: TestAccount;
let runtime: DockerRuntime;

beforeAll(async () => {
  stack = await startStack({
    runtime: (config, logger) => (runtime = createDockerRuntime({ config, logger })),
  });
  account = await createAccount(stack);
});

afterAll(async () => {
  await stack?.stop();
});

const FINGERPRINT = 'find . -type f -print0 | sort -z | xargs -0 sha256sum';

const execute = (sessionId: string, command: string) =>
  call<{ stdout: string; exitCode: number }>(`${stack.url}/v1/execute`, {
    method: 'POST',
    key: account.key,
    body: { sessionId, command },
  });

/** A session with binary, nested and empty files; returns it and its fingerprint. */
async function sessionWithFiles(): Promise<{ id: string; fingerprint: string }> {
  const id = await createSession(stack.url, account.key);
  const made = await execute(
    id,
    'head -c 3000000 /dev/urandom > blob.bin && mkdir -p a/b && echo nested > a/b/c.txt && : > empty && ' +
      FINGERPRINT,
  );
  expect(made.body.exitCode).toBe(0);
  expect(made.body.stdout.split('\n').filter(Boolean)).toHaveLength(3);
  return { id, fingerprint: made.body.stdout };
}

async function containerOf(sessionId: string) {
  const found = await sessionContainer(sessionId);
  return found === undefined ? undefined : docker.getContainer(found.Id).inspect();
}

/** What a reboot leaves: the container stopped, the session's disk no longer mounted. */
async function reboot(sessionId: string): Promise<void> {
  const container = await containerOf(sessionId);
  await docker.getContainer(container!.Id).kill();
  await docker.getContainer(container!.Id).wait();
  await run('umount', [`${testWorkspaceDir(stack.nodeId)}/${sessionId}`]);
}

const isMounted = async (sessionId: string) =>
  await run('findmnt', ['-n', `${testWorkspaceDir(stack.nodeId)}/${sessionId}`]).then(
    () => true,
    () => false,
  );

it('starts a sandbox stopped by a reboot on its own disk, at the next request', async () => {
  const { id, fingerprint } = await sessionWithFiles();
  await reboot(id);
  expect(await isMounted(id)).toBe(false);
  const after = await execute(id, FINGERPRINT);
  expect(after.status).toBe(200);
  expect(after.body.stdout).toBe(fingerprint);
  expect((await containerOf(id))?.State.Running).toBe(true);
});

it('starts stopped sandboxes by itself in its reconcile pass', async () => {
  const { id, fingerprint } = await sessionWithFiles();
  await reboot(id);
  const report = await runtime.reconcile();
  expect(report.started).toEqual([id]);
  expect((await containerOf(id))?.State.Running).toBe(true);
  expect(await isMounted(id)).toBe(true);
  expect((await execute(id, FINGERPRINT)).body.stdout).toBe(fingerprint);
  expect(await runtime.reconcile()).toEqual({ started: [], rebuilt: [] });
});

it('rebuilds a container removed behind its back, on the same workspace', async () => {
  const lazy = await sessionWithFiles();
  const eager = await sessionWithFiles();
  for (const { id } of [lazy, eager]) {
    await docker.getContainer((await containerOf(id))!.Id).remove({ force: true });
  }
  // On a request...
  const healed = await execute(lazy.id, FINGERPRINT);
  expect([healed.status, healed.body.stdout]).toEqual([200, lazy.fingerprint]);
  // ... or by the reconcile pass.
  expect((await runtime.reconcile()).rebuilt).toEqual([eager.id]);
  expect((await containerOf(eager.id))?.State.Running).toBe(true);
  expect((await execute(eager.id, FINGERPRINT)).body.stdout).toBe(eager.fingerprint);
});

it('never brings back a deleted session', async () => {
  const { id } = await sessionWithFiles();
  const deleted = await call(`${stack.url}/v1/sessions/${id}`, {
    method: 'DELETE',
    key: account.key,
  });
  expect(deleted.status).toBe(200);
  expect(await runtime.reconcile()).toEqual({ started: [], rebuilt: [] });
  expect(await sessionContainerNow(id)).toBeUndefined();
  await expect(access(`${testWorkspaceDir(stack.nodeId)}/.specs/${id}.json`)).rejects.toThrow();
});
