import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiClient } from '../support/api-client';
import { createAccount } from '../support/api';
import { FILL, FINGERPRINT, untilDeepSleep } from '../support/deep-sleep';
import { docker } from '../support/stack';
import { useStack } from '../support/use-stack';

/**
 * Deep sleep that keeps the session's disk on the node (SANDBOX_DEEP_SLEEP=disk, what
 * ./scripts/up runs; ADR 26): asleep, the session has no container and its manifest says
 * `disk`; each wake is a new container on the same disk, with every byte, mode, mtime and
 * symlink, and its processes gone as after any deep sleep.
 */
const CYCLES = 3;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const t = useStack({
  // Kept from 16 MB in use: the 30 MB workspace below is kept, an empty one is archived.
  agentEnv: { SANDBOX_DEEP_SLEEP: 'disk', SANDBOX_DEEP_SLEEP_DISK_MIN_MB: '16' },
  gatewayEnv: {
    SESSION_IDLE_AFTER_S: '1',
    SESSION_DEEP_SLEEP_AFTER_S: '2',
    SESSION_SWEEP_INTERVAL_S: '3600',
  },
});

it(`keeps the disk through ${CYCLES} deep-sleep cycles, every byte back`, async () => {
  const { key } = await createAccount(t.stack, 'paid');
  const api = new ApiClient(t.stack, key);
  const sessionId = await api.createSession();
  const filled = await api.execute<{ exitCode: number; stderr: string }>(sessionId, {
    command: `${FILL} && (nohup sleep 600 >/dev/null 2>&1 &)`,
    timeout: 120,
  });
  expect(filled.body).toMatchObject({ exitCode: 0, stderr: '' });
  let expected = (await api.execute<{ stdout: string }>(sessionId, { command: FINGERPRINT })).body
    .stdout;
  expect(expected).toContain('l 777 1577934245 ./link -> random.bin');

  const wakes: number[] = [];
  for (let cycle = 0; cycle < CYCLES; cycle += 1) {
    await untilDeepSleep(api, sessionId);
    // The state says deep-sleep as the node starts on it: its container goes last.
    const manifest = join(t.stack.agentConfig.blobStoreDir, `${sessionId}.json`);
    const containers = () =>
      docker.listContainers({ all: true, filters: { name: [`${sessionId}`] } });
    for (let i = 0; i < 100 && (await containers()).length > 0; i += 1) await sleep(100);
    expect(await containers()).toEqual([]);
    expect(JSON.parse(readFileSync(manifest, 'utf8'))).toMatchObject({ format: 'disk' });

    const started = Date.now();
    const woken = await api.execute<{ stdout: string }>(sessionId, {
      command: "pgrep -f 'sleep 60[0]' || echo no-processes",
    });
    wakes.push(Date.now() - started);
    expect([cycle, woken.status, woken.body.stdout]).toEqual([cycle, 200, 'no-processes\n']);
    expect(existsSync(manifest)).toBe(false);
    const back = await api.execute<{ stdout: string }>(sessionId, { command: FINGERPRINT });
    expect(back.body.stdout).toBe(expected);
    const changed = await api.execute<{ stdout: string }>(sessionId, {
      command: `echo cycle ${cycle} >> many/f3 && ${FINGERPRINT}`,
    });
    expected = changed.body.stdout;
  }
  process.stdout.write(`deep sleep keeping the disk: wakes ${wakes.join(', ')} ms\n`);
  // A workspace under the threshold goes to the blob store as an archive.
  const small = await api.createSession();
  await api.execute(small, { command: 'echo small > a.txt' });
  await untilDeepSleep(api, small);
  const smallManifest = join(t.stack.agentConfig.blobStoreDir, `${small}.json`);
  for (let i = 0; i < 100 && !existsSync(smallManifest); i += 1) await sleep(100);
  expect(JSON.parse(readFileSync(smallManifest, 'utf8'))).toMatchObject({
    format: expect.stringMatching(/^tar/),
  });
  // A fork wakes a sleeping source first, as any request does (ADR 43).
  const forked = await api.post<{ sessions: { sessionId: string }[] }>(
    `/v1/sessions/${small}/fork`,
    {},
  );
  expect(forked.status).toBe(201);
  const copy = forked.body.sessions[0]?.sessionId ?? '';
  const inCopy = await api.execute<{ stdout: string }>(copy, { command: 'cat a.txt' });
  expect(inCopy.body.stdout).toBe('small\n');
  const smallBack = await api.execute<{ stdout: string }>(small, { command: 'cat a.txt' });
  expect(smallBack.body.stdout).toBe('small\n');
  // Deleted while asleep: the kept disk goes with it.
  await untilDeepSleep(api, sessionId);
  expect((await api.deleteSession(sessionId)).status).toBe(200);
  // Wherever its image was: beside the mounts, or in the disk store (ADR 43).
  const { workspaceDir } = t.stack.agentConfig;
  for (const image of [
    join(workspaceDir, `${sessionId}.ext4`),
    join(workspaceDir, '.disks', `${sessionId}.ext4`),
  ]) {
    expect(existsSync(image)).toBe(false);
  }
}, 180_000);
