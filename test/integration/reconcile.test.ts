import { execFile } from 'node:child_process';
import { access } from 'node:fs/promises';
import { promisify } from 'node:util';
import { createDockerRuntime, type DockerRuntime } from '@sandbox/agent';
import { docker, sessionContainer, sessionContainerNow, testWorkspaceDir } from '../support/stack';
import { useStackWithAccount } from '../support/use-stack';

/**
 * The agent brings sandboxes back by itself (desired state vs actual state): after a reboot
 * (containers stopped, disks unmounted) and when a container vanished behind its back, on the
 * next request or its periodic reconcile, with every byte of the workspace intact.
 */

const run = promisify(execFile);
let runtime: DockerRuntime;
const t = useStackWithAccount('free', {
  stack: { runtime: (config, logger) => (runtime = createDockerRuntime({ config, logger })) },
});

const FINGERPRINT = 'find . -type f -print0 | sort -z | xargs -0 sha256sum';

const execute = (sessionId: string, command: string) =>
  t.api.execute<{ stdout: string; exitCode: number }>(sessionId, { command });

/** A session with binary, nested and empty files; returns it and its fingerprint. */
async function sessionWithFiles(): Promise<{ id: string; fingerprint: string }> {
  const id = await t.api.createSession();
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
  await run('umount', [`${testWorkspaceDir(t.stack.nodeId)}/${sessionId}`]);
}

const isMounted = async (sessionId: string) =>
  await run('findmnt', ['-n', `${testWorkspaceDir(t.stack.nodeId)}/${sessionId}`]).then(
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
  const deleted = await t.api.delete(`/v1/sessions/${id}`);
  expect(deleted.status).toBe(200);
  expect(await runtime.reconcile()).toEqual({ started: [], rebuilt: [] });
  expect(await sessionContainerNow(id)).toBeUndefined();
  await expect(access(`${testWorkspaceDir(t.stack.nodeId)}/.specs/${id}.json`)).rejects.toThrow();
});
