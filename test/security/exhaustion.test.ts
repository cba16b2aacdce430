import { readFile } from 'node:fs/promises';
import { docker, onGvisor, sessionContainer } from '../support/stack';
import { useStackWithAccount } from '../support/use-stack';
import {
  startWebhookReceiver,
  verifySignature,
  type WebhookReceiver,
} from '../support/webhook-receiver';

/**
 * Resource exhaustion inside one session stays inside it: the neighbour keeps answering, and
 * the attacker gets a clear result.
 */

const t = useStackWithAccount('paid', {
  stack: { gatewayEnv: { WEBHOOK_POLL_INTERVAL_MS: '100' } },
});
/** Receives the account's resource_limit.exceeded events. */
let limits: WebhookReceiver;
let limitsSecret: string;

beforeAll(async () => {
  limits = await startWebhookReceiver();
  t.beforeStop(() => limits.close());
  const hook = await t.api.post<{ secret: string }>('/v1/webhooks', {
    url: limits.url,
    events: ['resource_limit.exceeded'],
  });
  limitsSecret = hook.body.secret;
});

/** Waits for the resource_limit.exceeded event of `sessionId` about `limit`, signed. */
async function limitEvent(sessionId: string, limit: string): Promise<Record<string, unknown>> {
  const matches = () =>
    limits.received.filter((r) => {
      const payload = JSON.parse(r.body) as { data: { sessionId: string; limit: string } };
      return payload.data.sessionId === sessionId && payload.data.limit === limit;
    });
  await limits.waitFor(() => matches().length > 0);
  const [event] = matches();
  expect(verifySignature(limitsSecret, event!)).toBe(true);
  return JSON.parse(event!.body) as Record<string, unknown>;
}

const session = (body: Record<string, unknown> = {}) => t.api.createSession(body);

/**
 * Waits (30 s at most) until the kernel has refused the session a fork at its process limit,
 * as its container's pids cgroup counts: a bomb at 0.25 CPU takes seconds to get there.
 */
async function untilForkRefused(sessionId: string): Promise<void> {
  const found = await sessionContainer(sessionId);
  const { State } = await docker.getContainer(found!.Id).inspect();
  const cgroups = await readFile(`/proc/${State.Pid}/cgroup`, 'utf8');
  const path = /^\d+:pids:(.*)$/m.exec(cgroups)?.[1];
  const events = path === undefined ? undefined : `/sys/fs/cgroup/pids${path}/pids.events`;
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const text = events === undefined ? '' : await readFile(events, 'utf8').catch(() => '');
    if (Number(/^max (\d+)$/m.exec(text)?.[1] ?? 0) > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${sessionId} never reached its process limit`);
}

const execute = (sessionId: string, body: Record<string, unknown>) =>
  t.api.execute<{
    stdout: string;
    stderr: string;
    exitCode: number;
    timedOut?: boolean;
    outputTruncated?: boolean;
  }>(sessionId, body);

/**
 * How long the neighbour may take to answer while the attack runs: 5 s on runc, the default
 * (ADR 36). On gVisor every system call of the neighbour is served by a Sentry that competes
 * with the attacker's for the same two cores: in a slow hour of this machine (2026-11-27) the
 * neighbour answered in 5.4–8 s, on the code before and after ADR 36 alike (docs/security.md).
 */
const NEIGHBOUR_BOUND_MS = onGvisor ? 15_000 : 5000;
// The attacks themselves run several times longer on gVisor.
if (onGvisor) jest.setTimeout(180_000);

/**
 * Runs the attack `body` in `attacker` while a neighbour session runs `echo`: the neighbour is
 * answered, each time within NEIGHBOUR_BOUND_MS. Returns the attack's own answer.
 */
async function attackBesideNeighbour(attacker: string, body: Record<string, unknown>) {
  const attack = execute(attacker, body);
  const neighbour = await session();
  const times: number[] = [];
  for (let i = 0; i < 3; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const started = Date.now();
    const response = await execute(neighbour, { command: 'echo alive' });
    expect(response.body.stdout).toBe('alive\n');
    times.push(Date.now() - started);
  }
  const result = await attack;
  expect(Math.max(...times)).toBeLessThan(NEIGHBOUR_BOUND_MS);
  return result;
}

// Known gaps on gVisor (docs/security.md): a bomb at the process limit starves the exec that
// kills it from inside past the API's timeout, and the host's OOM killer may end the
// Sentry of a memory bomb's sandbox. The neighbours' isolation holds under either runtime.
const onRunc = onGvisor ? it.skip : it;

describe('exhaustion stays in its session: processes, memory, CPU', () => {
  onRunc('contains a fork bomb by the process limit', async () => {
    const attacker = await session();
    await attackBesideNeighbour(attacker, { command: ':(){ :|:& };:', timeout: 6 });
    await untilForkRefused(attacker);
    // The bomb lives on in the background, capped by the process limit, until it is killed.
    const kill = await t.api.kill<{ killed: number }>(attacker);
    expect(kill.status).toBe(200);
    expect(kill.body.killed).toBeGreaterThan(0);
    // The user's live processes (real uid 1000) outside this run's own process group.
    const after = await execute(attacker, {
      command:
        'echo recovered; ps -U 1000 -o pgid=,stat= | ' +
        "awk -v own=$(ps -o pgid= -p $$) '$1 != own && $2 !~ /^Z/' | wc -l",
    });
    if (after.body.stdout === undefined) throw new Error(after.text);
    const [word, count] = after.body.stdout.trim().split('\n');
    expect(word).toBe('recovered');
    expect(Number(count)).toBe(0);
    expect(await limitEvent(attacker, 'processes')).toEqual({
      type: 'resource_limit.exceeded',
      timestamp: expect.any(String),
      data: { sessionId: attacker, limit: 'processes', max: 256 },
    });
  });

  onRunc('kills a memory bomb at the session limit', async () => {
    const attacker = await session({ resourceLimits: { memory: 256 } });
    const result = await attackBesideNeighbour(attacker, {
      code: 'const chunks = []; for (;;) chunks.push(Buffer.alloc(16 * 1024 * 1024, 1));',
      timeout: 30,
    });
    // A 503 here was the runner taken by a second OOM kill (docs/security.md): say what came.
    if (result.status !== 200) throw new Error(`answered ${result.status}: ${result.text}`);
    expect(result.body.exitCode).not.toBe(0);
    expect((await execute(attacker, { command: 'echo still-usable' })).body.stdout).toBe(
      'still-usable\n',
    );
    expect((await limitEvent(attacker, 'memory')).data).toEqual({
      sessionId: attacker,
      limit: 'memory',
      max: 256,
    });
  });

  it('contains CPU spinning in many processes', async () => {
    const attacker = await session();
    await attackBesideNeighbour(attacker, {
      command: 'for i in $(seq 8); do (while :; do :; done) & done; sleep 4; kill 0',
      timeout: 10,
    });
  });

  // The inodes are those of the session's ext4 disk on the host, under either runtime; on
  // gVisor each file goes through its gofer, and filling 65,000 of them takes minutes.
  (onGvisor ? it.skip : it)(
    'answers 507 when the inodes run out, and the session stays usable',
    async () => {
      const attacker = await session();
      await execute(attacker, {
        command:
          'mkdir -p f && cd f && for b in $(seq 0 70); do touch $(seq -f "$b-%g" 1 1000) 2>/dev/null || break; done; true',
        timeout: 60,
      });
      const write = await t.api.writeFile(attacker, 'one-more.txt', 'x');
      expect(write.status).toBe(507);
      expect(write.body).toMatchObject({ error: { code: 'disk_full' } });
      expect((await limitEvent(attacker, 'disk')).data).toEqual({
        sessionId: attacker,
        limit: 'disk',
        max: 1024,
      });
      await execute(attacker, { command: 'rm -rf f', timeout: 60 });
      expect(
        (await execute(attacker, { command: 'echo ok > again.txt && cat again.txt' })).body.stdout,
      ).toBe('ok\n');
    },
  );
});

describe('exhaustion stays in its session: disk and output', () => {
  it('fills only its own disk, answers 507 and reports the limit', async () => {
    const attacker = await session();
    const result = await attackBesideNeighbour(attacker, {
      command:
        'dd if=/dev/zero of=fill bs=1M 2>&1; echo "dd exit $?"; df -m --output=size . | tail -1',
      timeout: 60,
    });
    expect(result.status).toBe(200);
    expect(result.body.stdout).toMatch(/No space left on device/);
    expect(result.body.stdout).toMatch(/dd exit 1/);
    // The filesystem is the session's own 1 GB disk.
    const sizeMb = Number(result.body.stdout.trim().split('\n').pop());
    expect(sizeMb).toBeGreaterThan(900);
    expect(sizeMb).toBeLessThanOrEqual(1024);
    // dd stops with up to one block (1 MB) left: more than that cannot fit.
    const write = await t.api.writeFile(attacker, 'more.txt', 'x'.repeat(2_000_000));
    expect(write.status).toBe(507);
    expect(write.body).toMatchObject({
      error: { code: 'disk_full', details: { limit: expect.any(Number) } },
    });
    expect((await limitEvent(attacker, 'disk')).data).toEqual({
      sessionId: attacker,
      limit: 'disk',
      max: 1024,
    });
    await execute(attacker, { command: 'rm fill' });
    expect((await execute(attacker, { command: 'echo ok > f && cat f' })).body.stdout).toBe('ok\n');
  });

  // The cap is the runner's, the same under either runtime; what a busy sandbox costs its
  // neighbours on gVisor is the CPU case above. On gVisor this case took 39 s.
  (onGvisor ? it.skip : it)(
    'caps a flood of output and keeps the neighbour answering',
    async () => {
      const attacker = await session();
      // 40 MB, more than twice the 16 MiB kept: 100 MB through `tr` outlasted the run's minute
      // on gVisor in a slow hour.
      const result = await attackBesideNeighbour(attacker, {
        command: 'head -c 40000000 /dev/zero | tr "\\0" x',
        timeout: 120,
      });
      expect(result.status).toBe(200);
      expect(result.body.exitCode).toBe(0);
      expect(result.body.outputTruncated).toBe(true);
      expect(result.body.stdout.length).toBe(16 * 1024 * 1024);
    },
  );
});

describe('exhaustion stays in its session: open files and watches', () => {
  it('stops a process opening thousands of files at its limit, and nothing else', async () => {
    const attacker = await session();
    const result = await attackBesideNeighbour(attacker, {
      code: `
        const fs = require('node:fs');
        fs.writeFileSync('f', 'x');
        const fds = [];
        try { for (;;) fds.push(fs.openSync('f', 'r')); }
        catch (err) { console.log(err.code, fds.length > 8000 && fds.length < 8192); }
      `,
      timeout: 30,
    });
    expect(result.body.stdout).toBe('EMFILE true\n');
    expect((await execute(attacker, { command: 'echo fine' })).body.stdout).toBe('fine\n');
  });

  // The limit at stake is the host kernel's, per host uid, which every remapped sandbox shares
  // under runc. On gVisor the Sentry keeps inotify itself and holds nothing of the host's: the
  // case has nothing to attack there (and its 160 spawns took 56 s).
  (onGvisor ? it.skip : it)(
    "holds a session's file watches (inotify) to its own share, and the neighbour keeps its own",
    async () => {
      // Each `tail -f` of a file on the workspace's disk holds one inotify instance. Under the
      // engine's remapping every sandbox's user is one host uid, which the kernel's per-user
      // inotify limits would share between all sessions of the node.
      const attacker = await session();
      const inotifyCount = 'ls -l /proc/*/fd 2>/dev/null | grep -c inotify';
      const held = await execute(attacker, {
        command: `touch f; for i in $(seq 140); do tail -f f >/dev/null 2>&1 & done; sleep 2; ${inotifyCount}`,
        timeout: 30,
      });
      const count = Number(held.body.stdout);
      expect(count).toBeGreaterThan(100);
      expect(count).toBeLessThanOrEqual(128);
      const neighbour = await session();
      const watched = await execute(neighbour, {
        command: `touch g; for i in $(seq 20); do tail -f g >/dev/null 2>&1 & done; sleep 2; ${inotifyCount}`,
        timeout: 30,
      });
      expect(watched.body.stdout).toBe('20\n');
      await t.api.kill(attacker);
      await t.api.kill(neighbour);
    },
  );

  it('limits open files per process', async () => {
    const attacker = await session();
    const result = await execute(attacker, { command: 'ulimit -n; ulimit -Hn' });
    expect(result.body.stdout).toBe('8192\n8192\n');
  });
});
