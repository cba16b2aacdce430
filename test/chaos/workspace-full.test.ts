import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync } from 'node:fs';
import { call, createAccount } from '../support/api';
import { sessionContainers, startStack, testWorkspaceDir, type TestStack } from '../support/stack';

/**
 * The host directory that holds the sessions' disks is full, already when the agent starts:
 * the agent starts all the same, a create answers with a clear error in the spec's shape, and
 * leaves no container, disk or mount behind; a session works again once there is room.
 */
let stack: TestStack;
let dir: string;

beforeAll(async () => {
  dir = `${testWorkspaceDir('full')}-${Date.now()}`;
  mkdirSync(dir, { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', dir]);
  // Fill it (dd stops, and fails, when the filesystem is full), then start the agent on it.
  execFileSync('sh', ['-c', `dd if=/dev/zero of=${dir}/filler bs=1M count=16 2>/dev/null || true`]);
  stack = await startStack({ agentEnv: { SANDBOX_WORKSPACE_DIR: dir, SANDBOX_POOL: '0' } });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  execFileSync('umount', ['-l', dir]);
  rmdirSync(dir);
});

it('answers a create with a clear error when the host has no room for its disk, leaving nothing', async () => {
  const account = await createAccount(stack, 'paid');
  const created = await call(`${stack.url}/v1/sessions/create`, {
    method: 'POST',
    key: account.key,
    body: {},
  });
  expect(created.status).toBe(503);
  expect(created.body).toMatchObject({
    error: { code: 'service_unavailable', message: 'Could not provision the session disk' },
  });
  expect(Number(created.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(await sessionContainers(stack.nodeId)).toEqual([]);
  // No disk image left, nor a half-written CA bundle (the agent could not write it).
  const kept = ['filler', '.specs', '.logs']; // the node's own directories, not a session's
  expect(readdirSync(dir).filter((f) => !kept.includes(f))).toEqual([]);
  const mounts = readFileSync('/proc/mounts', 'utf8').split('\n');
  expect(mounts.filter((line) => line.split(' ')[1]?.startsWith(`${dir}/`))).toEqual([]);

  // Room again: creates work, without a restart of the agent.
  rmSync(`${dir}/filler`);
  const again = await call<{ sessionId: string }>(`${stack.url}/v1/sessions/create`, {
    method: 'POST',
    key: account.key,
    body: {},
  });
  expect(again.status).toBe(200);
  const ran = await call(`${stack.url}/v1/execute`, {
    method: 'POST',
    key: account.key,
    body: { sessionId: again.body.sessionId, command: 'echo ok' },
  });
  expect(ran.body).toMatchObject({ stdout: 'ok\n', exitCode: 0 });
});
