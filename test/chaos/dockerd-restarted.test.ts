import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { freezerOfProcess, isFrozen } from '@sandbox/agent';
import type Docker from 'dockerode';
import {
  FORBIDDEN_ADDRESSES,
  probeForbidden,
  useForbiddenListeners,
} from '../support/forbidden-listeners';
import { previewRequest, startPreviewApp } from '../support/preview-app';
import { docker, nodeLabelFilter } from '../support/stack';
import { StreamedRun } from '../support/streamed-run';
import { useStackWithAccount } from '../support/use-stack';

/**
 * The Docker engine restarted under a running agent (as a package upgrade or a crash of
 * dockerd would): it stops every container on its way down. The sessions come back as after
 * a reboot: the next request starts their sandbox again on their own disk, files intact,
 * background processes gone; previews reach the new container; the warm pool replaces its
 * dead members; a run under way ends with an error event, not a cut; the egress firewall
 * still holds.
 */
useForbiddenListeners();
const t = useStackWithAccount('paid', { stack: { edge: true } });

const ROOT = join(__dirname, '..', '..');

/** The pid of the node's dockerd, as the scripts find it (its pid file first). */
function dockerdPid(): number | undefined {
  const found = spawnSync(
    'bash',
    ['-c', 'source scripts/lib/common.sh && source scripts/lib/ensure-docker.sh && dockerd_pid'],
    { cwd: ROOT, encoding: 'utf8' },
  );
  return found.status === 0 ? Number(found.stdout.trim()) : undefined;
}

/** Stops dockerd (as its service manager would) and starts it again as the scripts do. */
async function restartDockerd(): Promise<void> {
  if (existsSync('/run/systemd/system')) {
    execFileSync('systemctl', ['restart', 'docker']);
    return;
  }
  const pid = dockerdPid();
  if (pid === undefined) throw new Error('no dockerd process');
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + 60_000;
  while (existsSync(`/proc/${pid}`)) {
    if (Date.now() > deadline) throw new Error('dockerd did not stop within 60 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  execFileSync(
    'bash',
    ['-c', 'source scripts/lib/common.sh && source scripts/lib/ensure-docker.sh && ensure_docker'],
    { cwd: ROOT, stdio: 'ignore' },
  );
}

/**
 * A pool member waits frozen (ADR 36): through its cgroup's freezer, which Docker still sees as
 * running, or through Docker's pause where the agent cannot write the freezer.
 */
async function waitsFrozen(member: Docker.ContainerInfo): Promise<boolean> {
  if (member.State === 'paused') return true;
  if (member.State !== 'running') return false;
  const { State } = await docker.getContainer(member.Id).inspect();
  const freezer = await freezerOfProcess(State.Pid);
  return freezer !== undefined && (await isFrozen(freezer));
}

const previewHost = (sessionId: string) => `${sessionId.replace('_', '-')}.preview.test`;

it('brings sessions back after the Docker engine restarts', async () => {
  // One session from the warm pool, one made to measure (its shape is not the pool's).
  const pooled = await t.api.createSession();
  const fresh = await t.api.createSession({ resourceLimits: { memory: 512 } });
  for (const id of [pooled, fresh]) {
    expect((await t.api.writeFile(id, 'kept.txt', `kept by ${id}`)).status).toBe(200);
  }
  await startPreviewApp(t.stack.url, t.account.key, pooled);
  expect((await previewRequest(t.stack.edge?.url ?? '', previewHost(pooled))).status).toBe(200);

  const running = await t.api.executeStream(fresh, { command: 'echo started; sleep 120' });
  const stream = new StreamedRun(running);
  await stream.untilStdout('started');

  await restartDockerd();

  // The run under way ends with an error event.
  await stream.rest();
  expect(stream.events().at(-1)?.event).toBe('error');

  // Each session answers again, on its own disk, with its processes gone (as after a reboot).
  for (const id of [pooled, fresh]) {
    const read = await t.api.execute<{ stdout: string }>(id, {
      command:
        'cat kept.txt; echo; ps -eo args= | grep -E "^(node preview-app|sleep 120)" || echo none',
    });
    expect(read.status).toBe(200);
    expect(read.body.stdout).toBe(`kept by ${id}\nnone\n`);
    expect((await t.api.session<{ state: string }>(id)).body.state).toBe('active');
  }

  // dockerd set its own firewall chains up again: the sandboxes' rules still apply.
  for (const address of FORBIDDEN_ADDRESSES) {
    const tried = await t.api.execute<{ stdout: string }>(fresh, {
      command: probeForbidden(address),
    });
    expect([address, tried.body.stdout]).toEqual([address, 'blocked\n']);
  }

  // Its preview reaches the new container once its app runs again.
  await startPreviewApp(t.stack.url, t.account.key, pooled);
  const visit = await previewRequest(t.stack.edge?.url ?? '', previewHost(pooled));
  expect(visit.status).toBe(200);

  // New sessions work, and the pool holds live members again (its dead ones are gone).
  const after = await t.api.createSession();
  expect(
    (await t.api.execute<{ stdout: string }>(after, { command: 'echo ok' })).body,
  ).toMatchObject({ stdout: 'ok\n' });
  const poolSize = t.stack.agentConfig.pool.reduce((n, shape) => n + shape.size, 0);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const containers = await docker.listContainers({
      all: true,
      filters: nodeLabelFilter(t.stack.nodeId),
    });
    const pool = containers.filter((c) => c.Names.some((n) => !n.startsWith('/sbx-ses_')));
    // Sessions run; pool members wait frozen (ADR 36). Anything else was left stopped.
    const waiting = await Promise.all(
      containers.map(async (c) => (pool.includes(c) ? waitsFrozen(c) : c.State === 'running')),
    );
    if (waiting.every(Boolean) && pool.length === poolSize) break;
    if (Date.now() > deadline) {
      throw new Error(
        `pool not refilled: ${JSON.stringify(containers.map((c) => [c.Names, c.State]))}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}, 180_000);
