import { call, createAccount, createSession, type TestAccount } from '../support/api';
import { MANUAL_SWEEPS, startStack, type TestStack } from '../support/stack';

/**
 * Hosts without loop devices keep workspaces in Docker volumes (`SANDBOX_DISK_QUOTA=none`):
 * the same lifecycle holds there, every byte kept through deep sleep.
 */

let stack: TestStack;
let account: TestAccount;

beforeAll(async () => {
  stack = await startStack({
    agentEnv: { SANDBOX_DISK_QUOTA: 'none' },
    gatewayEnv: {
      SESSION_IDLE_AFTER_S: '1',
      SESSION_DEEP_SLEEP_AFTER_S: '2',
      ...MANUAL_SWEEPS,
    },
  });
  account = await createAccount(stack);
});

afterAll(async () => {
  await stack?.stop();
});

const FINGERPRINT =
  'find . -printf "%y %m %u %p %l\\n" | sort; find . -type f -print0 | sort -z | xargs -0 sha256sum';

const execute = (sessionId: string, command: string) =>
  call<{ stdout: string; exitCode: number }>(`${stack.url}/v1/execute`, {
    method: 'POST',
    key: account.key,
    body: { sessionId, command },
  });

it('keeps every byte of a volume workspace through deep sleep', async () => {
  const id = await createSession(stack.url, account.key);
  const made = await execute(
    id,
    'mkdir -p a/b && head -c 300000 /dev/urandom > a/b/r.bin && ln -s a/b/r.bin link && : > empty && echo x > locked && chmod 000 locked',
  );
  expect(made.body.exitCode).toBe(0);
  const before = (await execute(id, FINGERPRINT)).body.stdout;
  await new Promise((resolve) => setTimeout(resolve, 2200));
  expect((await stack.gateways[0]!.sweeper.sweep()).slept).toContain(id);
  const after = await execute(id, FINGERPRINT);
  expect([after.status, after.body.stdout]).toEqual([200, before]);
  expect((await execute(id, 'echo new > new.txt && cat new.txt')).body.stdout).toBe('new\n');
});
