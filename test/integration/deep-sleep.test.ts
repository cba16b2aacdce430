import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import * as grpc from '@grpc/grpc-js';
import { INTERNAL_TOKEN_METADATA_KEY } from '@sandbox/contract';
import { loadAgentProto, type AgentClient } from '@sandbox/proto';
import { sessionContainerNow, testWorkspaceDir } from '../support/stack';
import type { Snapshot } from '@sandbox/sdk';
import { createAccount } from '../support/api';
import type { ApiClient } from '../support/api-client';
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

/**
 * Fills the session's workspace with what a save must keep (`extra` too) and leaves a process
 * running in it; resolves with the workspace's fingerprint. 56 files: 5 MB of random bytes,
 * 50 small files, an empty one, a name with spaces, a symlink, modes the agent's umask would
 * change if tar applied it, and parts unreadable even to their owner (a save must not fail on
 * them).
 */
async function filledWorkspace(sessionId: string, extra: string[] = []): Promise<string> {
  const fill = [
    'mkdir -p a/b/c empty-dir',
    'head -c 5000000 /dev/urandom > a/big.bin',
    'for i in $(seq 1 50); do head -c $((i * 97)) /dev/urandom > a/b/c/f$i; done',
    ': > empty.txt',
    'printf "héllo\\n" > "name with spaces.txt"',
    'ln -s a/big.bin link-to-big',
    'chmod 600 a/b/c/f1',
    'mkdir shared-dir && chmod 777 shared-dir && echo shared > shared.txt && chmod 666 shared.txt',
    'echo locked-content > locked.txt && chmod 000 locked.txt',
    'mkdir locked-dir && echo inner-content > locked-dir/inner && chmod 000 locked-dir',
    ...extra,
  ];
  await execute(sessionId, fill.join(' && ') + '; nohup sleep 1000 >/dev/null 2>&1 &');
  return (await execute(sessionId, FINGERPRINT)).body.stdout;
}

it('saves a workspace byte for byte in deep sleep and brings it back', async () => {
  const sessionId = await t.api.createSession();
  const limits = { memoryMb: 1024, cpu: 0.25, diskMb: 1024, pids: 0 };
  const before = await filledWorkspace(sessionId);
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

interface ErrorBody {
  error: { code: string; details?: Record<string, unknown> };
}
const blobsDir = () => `${testWorkspaceDir(t.stack.nodeId)}-blobs`;
const blobsOf = async (snapshotId: string) =>
  (await readdir(blobsDir())).filter((name) => name.startsWith(snapshotId)).sort();
const snapshot = (api: ApiClient, sessionId: string, body: object = {}) =>
  api.post<Snapshot & ErrorBody>(`/v1/sessions/${sessionId}/snapshots`, body);

describe('snapshots (ADR 44)', () => {
  it('snapshots a running session, and new sessions start from it byte for byte', async () => {
    const source = await t.api.createSession({
      metadata: { team: 'a' },
      resourceLimits: { memory: 512 },
    });
    const before = await filledWorkspace(source, ['ln -s /etc host-etc']);

    const taken = await snapshot(t.api, source, { name: 'base', processes: true });
    expect(taken.status).toBe(201);
    expect(taken.body).toMatchObject({ sessionId: source, name: 'base', processesKept: false });
    expect(taken.body.snapshotId).toMatch(/^snap_[a-z0-9]{24}$/);
    expect(taken.body.sizeBytes).toBeGreaterThan(5_000_000);
    const { snapshotId } = taken.body;
    expect(await blobsOf(snapshotId)).toEqual([`${snapshotId}.json`, `${snapshotId}.tar`]);
    // Retried with its Idempotency-Key: the same snapshot, not a second one.
    const key = { 'idempotency-key': `snap-${snapshotId}` };
    const once = await t.api.post<Snapshot>(`/v1/sessions/${source}/snapshots`, {}, key);
    const again = await t.api.post<Snapshot>(`/v1/sessions/${source}/snapshots`, {}, key);
    expect(again.body).toEqual(once.body);
    expect((await t.api.delete(`/v1/snapshots/${once.body.snapshotId}`)).status).toBe(200);
    // The source runs on, its process too, and its files are its own.
    expect(
      (await execute(source, 'pgrep -f "sleep 100[0]" >/dev/null && echo alive')).body.stdout,
    ).toBe('alive\n');
    await execute(source, 'echo later > later.txt');

    // Its own settings where the create names none; the create's own fields win.
    const made = await t.api.post<{ sessionId: string; resourceLimits: { memory: number } }>(
      '/v1/sessions/create',
      { snapshotId },
    );
    expect(made.status).toBe(200);
    expect(made.body.resourceLimits.memory).toBe(512);
    const copy = made.body.sessionId;
    expect((await t.api.session<{ metadata: object }>(copy)).body.metadata).toEqual({ team: 'a' });
    expect((await execute(copy, FINGERPRINT)).body.stdout).toBe(before);
    expect((await execute(copy, 'pgrep -f "sleep 100[0]" || echo none')).body.stdout).toBe(
      'none\n',
    );
    const second = await t.api.createSession({ snapshotId, metadata: { team: 'b' } });
    expect((await t.api.session<{ metadata: object }>(second)).body.metadata).toEqual({
      team: 'b',
    });
    expect((await execute(second, FINGERPRINT)).body.stdout).toBe(before);

    const listed = await t.api.get<{ data: Snapshot[]; pagination: object }>(
      '/v1/snapshots?limit=1',
    );
    expect(listed.body.data).toEqual([taken.body]);
    expect(listed.body.pagination).toEqual({ total: 1, limit: 1, offset: 0, hasMore: false });
    expect((await t.api.get(`/v1/snapshots/${snapshotId}`)).body).toEqual(taken.body);

    // Deleting it removes its blob; it is then unknown everywhere.
    expect((await t.api.delete(`/v1/snapshots/${snapshotId}`)).body).toEqual({
      deleted: true,
      snapshotId,
    });
    expect(await blobsOf(snapshotId)).toEqual([]);
    for (const answer of [
      await t.api.get<ErrorBody>(`/v1/snapshots/${snapshotId}`),
      await t.api.delete<ErrorBody>(`/v1/snapshots/${snapshotId}`),
      await t.api.post<ErrorBody>('/v1/sessions/create', { snapshotId }),
    ]) {
      expect(answer.status).toBe(404);
      expect(answer.body.error.code).toBe('snapshot_not_found');
    }
    await Promise.all([source, copy, second].map((id) => t.api.deleteSession(id)));
  });
});

describe('snapshot quotas (ADR 44)', () => {
  it("keeps to the plan's quota, leaves nothing of a refused snapshot, and goes with its account", async () => {
    const account = await createAccount(t.stack, 'enterprise', { limits: { maxSnapshots: 1 } });
    const api = t.as(account.key);
    const sessionId = await api.createSession();
    await api.execute(sessionId, { command: 'echo one > one.txt' });
    const kept = await snapshot(api, sessionId);
    expect(kept.status).toBe(201);
    const before = await readdir(blobsDir());
    const refused = await snapshot(api, sessionId);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({
      code: 'snapshot_quota_exceeded',
      details: { kind: 'count', limit: 1, used: 1 },
    });
    // Past the plan's bytes: refused once stored, and the stored copy goes.
    const small = await createAccount(t.stack, 'enterprise', {
      limits: { maxSnapshotBytes: 1000 },
    });
    const smallApi = t.as(small.key);
    const smallSession = await smallApi.createSession();
    await smallApi.execute(smallSession, { command: 'head -c 100000 /dev/urandom > r.bin' });
    const tooBig = await snapshot(smallApi, smallSession);
    expect(tooBig.status).toBe(429);
    expect(tooBig.body.error).toMatchObject({
      code: 'snapshot_quota_exceeded',
      details: { kind: 'bytes', limit: 1000 },
    });
    expect((await smallApi.get<{ data: [] }>('/v1/snapshots')).body.data).toEqual([]);
    expect((await readdir(blobsDir())).sort()).toEqual(before.sort());

    // An account's deletion takes its snapshots' rows, and the sweeper their blobs.
    const gateway = t.stack.gateways[0]!;
    await api.deleteSession(sessionId);
    await smallApi.deleteSession(smallSession);
    await gateway.db.query('DELETE FROM accounts WHERE id = $1', [account.accountId]);
    await gateway.sweeper.sweep();
    expect(await blobsOf(kept.body.snapshotId)).toEqual([]);
  });
});
