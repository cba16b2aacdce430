import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  createDockerRuntime,
  DockerodeContainerClient,
  freezerOfProcess,
  isFrozen,
  type DockerRuntime,
} from '@sandbox/agent';
import { loadAgentConfig } from '@sandbox/config';
import type Docker from 'dockerode';
import { cgroupCpuReader } from '../../services/agent/src/testing/cgroup-cpu';
import {
  docker,
  nodeLabelFilter,
  onGvisor,
  removeNodeSandboxes,
  sessionContainer,
  sessionContainerNow,
  testWorkspaceDir,
} from '../support/stack';
import { useStackWithAccount } from '../support/use-stack';

/**
 * The warm pool, end to end: sessions come from it, a claimed sandbox is indistinguishable
 * from one made for the session, the pool refills after a burst, and an agent restart leaves
 * no member of the old run behind.
 */

const POOL_SIZE = 2;
/** What the pool may grow to with demand (its budget, `SANDBOX_POOL_MAX`). */
const POOL_MAX = 4;
let runtime: DockerRuntime | undefined;
const t = useStackWithAccount('free', {
  stack: {
    agentEnv: {
      SANDBOX_POOL: `${POOL_SIZE}:1024:0.25:1024`,
      SANDBOX_POOL_MAX: String(POOL_MAX),
    },
    runtime: (config, logger) => (runtime = createDockerRuntime({ config, logger })),
  },
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A reader of the CPU time a container's cgroup has used, in microseconds. */
async function cpuReader(containerId: string): Promise<() => Promise<number>> {
  const { State } = await docker.getContainer(containerId).inspect();
  return cgroupCpuReader(State.Pid);
}

async function poolReady(rt: DockerRuntime, size = POOL_SIZE): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (rt.poolStatus().reduce((n, s) => n + s.ready, 0) < size) {
    if (Date.now() > deadline) throw new Error('the pool did not fill');
    await sleep(50);
  }
}

/** Containers of the node that are unclaimed pool members. */
async function poolContainers(nodeId: string): Promise<string[]> {
  const all = await docker.listContainers({ all: true, filters: nodeLabelFilter(nodeId) });
  return all.flatMap((c) => c.Names).filter((name) => name.startsWith('/sbx-pool-'));
}

async function fromPool(sessionId: string): Promise<boolean> {
  const container = await sessionContainer(sessionId);
  return container?.Labels['io.sandbox.pool'] === 'true';
}

/** What a process in the session sees of its sandbox, apart from what is its own by nature. */
const LOOK = [
  'id',
  'pwd',
  'ls -la /workspace /tmp /home/sandbox | grep -v " \\.\\.\\?$" | sort',
  'ps -eo user,args --no-headers | grep -v " ps -eo\\| sort\\|sh -c" | sort',
  'env | grep -v "^HOSTNAME=\\|^SANDBOX_RUN_ID=\\|^PWD=\\|^_=" | sort',
  'ulimit -a',
  'cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/cpu.max /sys/fs/cgroup/pids.max',
  'df -k /workspace | tail -1 | awk "{print \\$2}"',
].join('; echo ---; ');

async function look(sessionId: string): Promise<string> {
  const run = await t.api.execute<{ stdout: string; stderr: string }>(sessionId, {
    command: LOOK,
  });
  expect(run.status).toBe(200);
  // Sizes and dates of /tmp and /home entries differ by when they were made, not by content;
  // the runner's scratch directory holds, for a moment, the file a zygote warms up with.
  return run.body.stdout
    .replace(/\s\w{3}\s+\d+\s+\d\d:\d\d\s/g, ' DATE ')
    .replace(/\d+ DATE \.sandbox-runner/, 'SIZE DATE .sandbox-runner');
}

describe('the warm pool', () => {
  it('serves creates, and a claimed sandbox is indistinguishable from one made for the session', async () => {
    await poolReady(runtime!);
    const pooled = await t.api.createSession();
    // The pool has one member left, then none until it refills: these come the slow way.
    const [second, cold] = await Promise.all([t.api.createSession(), t.api.createSession()]);
    expect(await fromPool(pooled)).toBe(true);
    expect([await fromPool(second), await fromPool(cold)]).toContain(false);
    const fresh = (await fromPool(second)) ? cold : second;
    expect(await look(pooled)).toBe(await look(fresh));

    // Same limits, same hardening: only names and addresses differ.
    const [a, b] = (await Promise.all(
      [pooled, fresh].map(async (id) =>
        docker.getContainer((await sessionContainer(id))!.Id).inspect(),
      ),
    )) as [Docker.ContainerInspectInfo, Docker.ContainerInspectInfo];
    const hostConfig = (info: Docker.ContainerInspectInfo) => {
      const { Binds: _binds, ...rest } = info.HostConfig;
      return rest;
    };
    expect(hostConfig(a)).toEqual(hostConfig(b));
    expect(a.Config.User).toBe(b.Config.User);
    expect(a.Config.Env).toEqual(b.Config.Env);
    for (const id of [pooled, second, cold]) await t.api.deleteSession(id);
  });

  it('never shows one session anything of another: files, processes, environment', async () => {
    await poolReady(runtime!);
    const first = await t.api.createSession();
    expect(await fromPool(first)).toBe(true);
    const planted = await t.api.execute(first, {
      command:
        'echo secret > /workspace/mine; echo secret > /tmp/mine; echo secret > ~/mine; ' +
        'nohup sleep 600 >/dev/null 2>&1 & echo started',
      env: { PLANTED_SECRET: 'yes' },
    });
    expect(planted.body).toMatchObject({ stdout: 'started\n' });
    await t.api.deleteSession(first);
    for (let i = 0; i < POOL_SIZE + 1; i += 1) {
      await poolReady(runtime!);
      const next = await t.api.createSession();
      expect(await fromPool(next)).toBe(true);
      const seen = await t.api.execute<{ stdout: string }>(next, {
        command:
          'ls -A /workspace /tmp ~; ps -eo args | grep -c "^sleep 60[0]"; env | grep -c PLANT[E]D; true',
      });
      expect(seen.body.stdout).not.toContain('mine');
      expect(seen.body.stdout.trim().split('\n').slice(-2)).toEqual(['0', '0']);
      await t.api.deleteSession(next);
    }
  });
});

describe('the warm pool: growth and frozen members', () => {
  it('grows after a burst that drained it, within its budget, and every session of the burst works', async () => {
    await poolReady(runtime!);
    const burst = await Promise.all(
      Array.from({ length: POOL_SIZE + 3 }, () => t.api.createSession()),
    );
    for (const id of burst) {
      const run = await t.api.execute<{ stdout: string }>(id, { command: 'echo $PWD' });
      expect(run.body.stdout).toBe('/workspace\n');
    }
    // Five creates within the minute: the pool keeps as many, up to its budget of four.
    expect(runtime!.poolStatus()[0]).toMatchObject({ size: POOL_SIZE, target: POOL_MAX });
    await poolReady(runtime!, POOL_MAX);
    expect(await poolContainers(t.stack.nodeId)).toHaveLength(POOL_MAX);
    // Deleted at once (each leaves the network alone first, SerialNetworkLeaves): none is left.
    await Promise.all(burst.map((id) => t.api.deleteSession(id)));
    for (const id of burst) expect(await sessionContainerNow(id)).toBeUndefined();
  });

  it('keeps its members frozen while they wait: they use no CPU', async () => {
    await poolReady(runtime!);
    const members = (
      await docker.listContainers({ all: true, filters: nodeLabelFilter(t.stack.nodeId) })
    ).filter((c) => c.Names.some((name) => name.startsWith('/sbx-pool-')));
    expect(members.length).toBeGreaterThanOrEqual(POOL_SIZE);
    for (const member of members) {
      // On runc the agent freezes a member through its cgroup (a claim thaws it with one file
      // write): Docker sees it running. gVisor's are paused through Docker.
      expect(member.State).toBe(onGvisor ? 'paused' : 'running');
      if (onGvisor) continue;
      const { State } = await docker.getContainer(member.Id).inspect();
      const freezer = await freezerOfProcess(State.Pid);
      expect(freezer !== undefined && (await isFrozen(freezer))).toBe(true);
    }
    const readers = await Promise.all(members.map((m) => cpuReader(m.Id)));
    const usage = () => Promise.all(readers.map((read) => read()));
    const before = await usage();
    await sleep(2000);
    const after = await usage();
    // Frozen, a member's processes get no CPU; gVisor's Sentry may still wake (its timers):
    // well under 0.5 % of a core is allowed (10 ms in 2 s).
    after.forEach((usec, i) => expect(usec - before[i]!).toBeLessThanOrEqual(10_000));
    // Each was frozen with its start-up done: its zygote had said it was warm, so a claim's
    // session does not finish that start on its own CPU after the thaw. (Read through the
    // container's root from the host; a gVisor sandbox's files are its own kernel's.)
    if (!onGvisor) {
      for (const member of members) {
        const { State } = await docker.getContainer(member.Id).inspect();
        const signs = await readdir(`/proc/${State.Pid}/root/tmp/.sandbox-runner`);
        expect(signs.filter((name) => /^zygote-warm-\d+$/.test(name))).toHaveLength(1);
      }
    }
    // A claimed member runs at once: the first run finds it thawed.
    const id = await t.api.createSession();
    const run = await t.api.execute<{ stdout: string }>(id, { command: 'echo thawed' });
    expect(run.body.stdout).toBe('thawed\n');
    await t.api.deleteSession(id);
  });
});

describe('the warm pool in idle time', () => {
  it('grows past its demand in idle time, towards its share of the node memory, and waits frozen', async () => {
    // A node of its own: a pool of one, a budget of three, and 1 % of the memory to fill.
    const config = loadAgentConfig({
      ...restartEnv(t.stack.agentConfig, 'i'),
      SANDBOX_POOL: '1:1024:0.25:1024',
      SANDBOX_POOL_MAX: '3',
      SANDBOX_POOL_IDLE_MEMORY_PERCENT: '1',
    });
    t.beforeStop(() => removeNodeSandboxes(config.nodeId));
    const idle = createDockerRuntime({ config, logger: t.stack.logger });
    t.beforeStop(() => idle.stop());
    await idle.prepare();
    // Its size first; then, with no request for a while, the rest of the budget.
    await poolReady(idle, 1);
    await poolReady(idle, 3);
    expect(idle.poolStatus()[0]).toMatchObject({ size: 1, target: 3, ready: 3 });
    const members = await poolContainers(config.nodeId);
    expect(members).toHaveLength(3);
    if (!onGvisor) {
      for (const name of members) {
        const { State } = await docker.getContainer(name.slice(1)).inspect();
        const freezer = await freezerOfProcess(State.Pid);
        expect(freezer !== undefined && (await isFrozen(freezer))).toBe(true);
      }
    }
    await idle.stop();
    expect(await poolContainers(config.nodeId)).toEqual([]);
  });
});

describe('the warm pool after an agent restart', () => {
  it('after an agent restart, removes the members of the old run (containers and disks) and keeps claimed sessions', async () => {
    const config = loadAgentConfig(restartEnv(t.stack.agentConfig));
    const logger = t.stack.logger;
    t.beforeStop(() => removeNodeSandboxes(config.nodeId));
    // The old run crashes: its members stay behind, as does a session claimed from it. (It
    // watches no Docker events: a crashed agent does not see the new run remove its members,
    // which a live one would replace.)
    const before = createDockerRuntime({
      config,
      logger,
      containers: new DockerodeContainerClient(docker, logger),
    });
    t.beforeStop(() => before.stop()); // should this test fail midway, stop its refills first
    await before.prepare();
    await poolReady(before);
    const claimed = await before.create({
      sessionId: `ses_${'r'.repeat(24)}`,
      accountId: 'acc_test',
      limits: { memoryMb: 1024, cpu: 0.25, diskMb: 1024, pids: 0 },
    });
    await poolReady(before);
    const oldMembers = await poolContainers(config.nodeId);
    expect(oldMembers).toHaveLength(POOL_SIZE);
    await before.writeFile(claimed.sessionId, { path: 'kept.txt', content: Buffer.from('kept') });

    const after = createDockerRuntime({ config, logger });
    await after.prepare();
    await poolReady(after);
    const members = await poolContainers(config.nodeId);
    expect(members).toHaveLength(POOL_SIZE);
    expect(members.filter((m) => oldMembers.includes(m))).toEqual([]);
    // Mounts beside the images' store (ADR 43), images in it.
    const disks = [
      ...(await readdir(config.workspaceDir)),
      ...(await readdir(join(config.workspaceDir, '.disks'))),
    ].filter((n) => n.startsWith('pool-'));
    expect(disks.sort()).toEqual(
      members
        .flatMap((m) => [`${m.slice('/sbx-'.length)}`, `${m.slice('/sbx-'.length)}.ext4`])
        .sort(),
    );
    // The claimed session survived, with its files.
    const read = await runFile(after, claimed.sessionId, 'kept.txt');
    expect(read).toBe('kept');

    await after.destroy(claimed.sessionId);
    await after.stop();
    expect(await poolContainers(config.nodeId)).toEqual([]);
    expect((await readdir(config.workspaceDir)).filter((n) => !n.startsWith('.'))).toEqual([]);
    const mounts = await readFile('/proc/self/mounts', 'utf8');
    expect(mounts).not.toContain(`${config.workspaceDir}/`);
  });
});

/** The environment of another agent on its own node and disks (the stack's keeps running). */
function restartEnv(stackConfig: { nodeId: string }, suffix = 'r'): Record<string, string> {
  const nodeId = `${stackConfig.nodeId}-${suffix}`;
  return {
    NODE_ID: nodeId,
    SANDBOX_WORKSPACE_DIR: testWorkspaceDir(nodeId),
    PACKAGE_CACHE_DIR: `${testWorkspaceDir(nodeId)}-packages`,
    BLOB_STORE_DIR: `${testWorkspaceDir(nodeId)}-blobs`,
    SANDBOX_POOL: `${POOL_SIZE}:1024:0.25:1024`,
    SANDBOX_POOL_MAX: '0',
    SANDBOX_IMAGE: t.stack.agentConfig.sandboxImage,
    ...(process.env.NODE_EXTRA_CA_CERTS
      ? { SANDBOX_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS }
      : {}),
  };
}

async function runFile(rt: DockerRuntime, sessionId: string, path: string): Promise<string> {
  const chunks: Buffer[] = [];
  const sink = {
    write: (_stream: 'stdout' | 'stderr', chunk: Buffer) => chunks.push(chunk) > 0,
    onDrain: () => undefined,
    started: () => undefined,
  };
  await rt.readFile(sessionId, path, sink, new AbortController().signal);
  return Buffer.concat(chunks).toString();
}
