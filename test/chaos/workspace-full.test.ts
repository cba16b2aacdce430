import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmdirSync } from 'node:fs';
import { call, createAccount } from '../support/api';
import { sessionContainers, startStack, testWorkspaceDir, type TestStack } from '../support/stack';

/**
 * The host directory that holds the sessions' disks is full: a create answers with a clear
 * error in the spec's shape, and leaves no container, disk or mount behind.
 */
let stack: TestStack;
let dir: string;

beforeAll(async () => {
  dir = `${testWorkspaceDir('full')}-${Date.now()}`;
  mkdirSync(dir, { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', dir]);
  stack = await startStack({ agentEnv: { SANDBOX_WORKSPACE_DIR: dir, SANDBOX_POOL: '0' } });
  // Fill it: dd stops (and fails) when the filesystem is full.
  execFileSync('sh', ['-c', `dd if=/dev/zero of=${dir}/filler bs=1M count=16 2>/dev/null || true`]);
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
  // No disk image left: only the filler and the agent's own CA bundle (written at its start).
  expect(readdirSync(dir).filter((f) => f !== 'filler' && f !== '.sandbox-extra-ca.pem')).toEqual(
    [],
  );
  const mounts = readFileSync('/proc/mounts', 'utf8').split('\n');
  expect(mounts.filter((line) => line.split(' ')[1]?.startsWith(`${dir}/`))).toEqual([]);
});
