import { existsSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { INTERNAL_TOKEN_METADATA_KEY } from '@sandbox/contract';
import { loadAgentProto, type AgentClient } from '@sandbox/proto';
import { sessionContainerNow, testWorkspaceDir } from '../support/stack';
import { useStackWithAccount } from '../support/use-stack';

/**
 * The agent's lifecycle primitives: idle (pause), deep sleep (save, verify, remove) and wake
 * (restore), with every byte of the workspace compared.
 */

const t = useStackWithAccount('paid');
let client: AgentClient;

beforeAll(() => {
  client = new (loadAgentProto().agent.v1.Agent)(
    t.stack.agent.address,
    grpc.credentials.createInsecure(),
  );
  t.beforeStop(() => client.close());
});

function unary<Res>(
  method: 'pauseSandbox' | 'resumeSandbox' | 'hibernateSandbox' | 'restoreSandbox',
  request: object,
): Promise<Res> {
  const metadata = new grpc.Metadata();
  metadata.set(INTERNAL_TOKEN_METADATA_KEY, `Bearer ${t.stack.internalToken}`);
  return new Promise((resolve, reject) => {
    (
      client[method] as unknown as (
        r: object,
        m: grpc.Metadata,
        cb: (e: Error | null, r?: Res) => void,
      ) => void
    ).call(client, request, metadata, (err, response) =>
      err || response === undefined ? reject(err ?? new Error('empty')) : resolve(response),
    );
  });
}

const execute = (sessionId: string, command: string) =>
  t.api.execute<{ stdout: string; exitCode: number }>(sessionId, { command, timeout: 60 });

/** Wakes the sleeping sandbox of `sessionId` with `limits`, as the gateway would. */
const restore = (sessionId: string, limits: Record<string, number>) =>
  unary<{ status: string }>('restoreSandbox', {
    sessionId,
    accountId: t.account.accountId,
    limits,
  });

const FINGERPRINT =
  'find . -printf "%y %m %u %p %l\\n" | sort; find . -type f -print0 | sort -z | xargs -0 sha256sum';

it('saves a workspace byte for byte in deep sleep and brings it back', async () => {
  const sessionId = await t.api.createSession();
  const limits = { memoryMb: 1024, cpu: 0.25, diskMb: 1024, pids: 0 };
  await execute(
    sessionId,
    [
      'mkdir -p a/b/c empty-dir',
      'head -c 5000000 /dev/urandom > a/big.bin',
      'for i in $(seq 1 50); do head -c $((i * 97)) /dev/urandom > a/b/c/f$i; done',
      ': > empty.txt',
      'printf "héllo\\n" > "name with spaces.txt"',
      'ln -s a/big.bin link-to-big',
      'chmod 600 a/b/c/f1',
      // Modes the agent's umask would change if tar applied it.
      'mkdir shared-dir && chmod 777 shared-dir && echo shared > shared.txt && chmod 666 shared.txt',
      // Unreadable even to its owner: the save must not fail on these.
      'echo locked-content > locked.txt && chmod 000 locked.txt',
      'mkdir locked-dir && echo inner-content > locked-dir/inner && chmod 000 locked-dir',
    ].join(' && ') + '; nohup sleep 1000 >/dev/null 2>&1 &',
  );
  const before = (await execute(sessionId, FINGERPRINT)).body.stdout;
  expect(before).toContain('link-to-big a/big.bin');
  expect(before).toContain('d 777 sandbox ./shared-dir');

  // Idle: frozen, and any request wakes it.
  const paused = await unary<{ status: string }>('pauseSandbox', { sessionId });
  expect(paused.status).toBe('paused');
  expect((await execute(sessionId, 'echo awake')).body.stdout).toBe('awake\n');

  // Deep sleep: saved, verified, then nothing is left running.
  const saved = await unary<{ filesCount: number; bytes: number }>('hibernateSandbox', {
    sessionId,
  });
  expect(saved.filesCount).toBe(56);
  expect(saved.bytes).toBeGreaterThan(5_000_000);
  expect(await sessionContainerNow(sessionId)).toBeUndefined();
  for (const dir of ['', '.disks/']) {
    expect(existsSync(`${testWorkspaceDir(t.stack.nodeId)}/${dir}${sessionId}.ext4`)).toBe(false);
  }
  // Asking again changes nothing.
  expect(await unary('hibernateSandbox', { sessionId })).toEqual(saved);

  // Wake: every byte, mode, owner and link as before; processes did not survive.
  const woken = await restore(sessionId, limits);
  expect(woken.status).toBe('running');
  const after = (await execute(sessionId, FINGERPRINT)).body.stdout;
  expect(after).toBe(before);
  expect((await execute(sessionId, 'pgrep -f "sleep 100[0]" || echo none')).body.stdout).toBe(
    'none\n',
  );
  const unlocked = await execute(
    sessionId,
    'stat -c %a locked.txt locked-dir && chmod 600 locked.txt && chmod 700 locked-dir && cat locked.txt locked-dir/inner && chmod 000 locked.txt locked-dir',
  );
  expect(unlocked.body.stdout).toBe('0\n0\nlocked-content\ninner-content\n');
  // Waking again is harmless.
  expect((await restore(sessionId, limits)).status).toBe('running');
  expect((await execute(sessionId, FINGERPRINT)).body.stdout).toBe(before);
});

it('destroys a sleeping session completely', async () => {
  const sessionId = await t.api.createSession();
  await execute(sessionId, 'echo secret > s.txt');
  await unary('hibernateSandbox', { sessionId });
  const deleted = await t.api.deleteSession(sessionId);
  expect(deleted.status).toBe(200);
  await expect(
    restore(sessionId, { memoryMb: 256, cpu: 0.25, diskMb: 1024, pids: 0 }),
  ).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
});
