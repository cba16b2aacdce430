import { access, mkdir, readFile, rmdir, utimes } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import {
  createDockerRuntime,
  FAVOR_DYNMODS_MOUNT,
  FAVOR_DYNMODS_NAME,
  favorsDynmods,
  type DockerRuntime,
} from '@sandbox/agent';
import { docker, onGvisor, sessionContainer } from '../support/stack';
import { useStackWithAccount } from '../support/use-stack';

/**
 * A session's CPU limit binds the session's own processes (commands, code runs, background
 * processes), in a CPU group of its own; the runner, and the Node it starts ahead of the next
 * code run, work outside it, so the session's CPU is never spent on them.
 */

let runtime: DockerRuntime | undefined;
const t = useStackWithAccount('paid', {
  session: true,
  stack: { runtime: (config, logger) => (runtime = createDockerRuntime({ config, logger })) },
});

const CPU_MOUNT = '/sys/fs/cgroup/cpu';
const nodeGroups = () => join(CPU_MOUNT, 'sandbox', `io.sandbox.${t.stack.nodeId}`);

/** The cpu-controller line of /proc/<pid>/cgroup, as a shell command prints it. */
const cpuGroupOf = (pid: string) =>
  `grep -E '^[0-9]+:(.*,)?cpu(,.*)?:' /proc/${pid}/cgroup | cut -d: -f3`;

interface Run {
  stdout: string;
  stderr: string;
  exitCode: number;
  cpuTime: number;
}

const command = (sessionId: string, line: string) =>
  t.api.execute<Run>(sessionId, { command: line });

// gVisor's processes are not the host's: no CPU group there (ADR 31); the limit is Docker's.
const describeSplit = onGvisor ? describe.skip : describe;
const describeGvisor = onGvisor ? describe : describe.skip;

describeGvisor('CPU limit on gVisor', () => {
  it("holds the session's CPU limit on the whole sandbox, with no CPU group", async () => {
    const container = await sessionContainer(t.sessionId);
    const info = await docker.getContainer(container?.Id as string).inspect();
    expect(info.HostConfig.NanoCpus).toBe(0.25e9);
    expect(info.Config.Labels?.['io.sandbox.cpu-group']).toBeUndefined();
    expect(info.HostConfig.Binds?.join(' ')).not.toContain('cgroup');
    const spin = await command(t.sessionId, "timeout 1 sh -c 'while :; do :; done'; true");
    expect(spin.body.exitCode).toBe(0);
    expect(spin.body.cpuTime).toBeGreaterThan(100);
    // gVisor counts some of its own work for the run: short of a whole CPU all the same.
    expect(spin.body.cpuTime).toBeLessThan(600);
  });
});

describeSplit("the sessions' CPU weight", () => {
  it("weighs every session's processes together as one task per CPU of the host (ADR 57)", async () => {
    const shares = await readFile(join(CPU_MOUNT, 'sandbox', 'cpu.shares'), 'utf8');
    expect(Number(shares)).toBe(1024 * availableParallelism());
  });
});

describeSplit('CPU split', () => {
  it("runs commands, code and background processes in the session's group, the runner outside it", async () => {
    const own = await command(t.sessionId, cpuGroupOf('self'));
    const group = own.body.stdout.trim();
    expect(group.startsWith(`/sandbox/io.sandbox.${t.stack.nodeId}/`)).toBe(true);

    const code = await t.api.execute<Run>(t.sessionId, {
      code: "import { readFileSync } from 'node:fs'; console.log(readFileSync('/proc/self/cgroup', 'utf8'))",
    });
    expect(code.body.stdout).toContain(`:cpu:${group}\n`);

    const started = await command(t.sessionId, 'nohup sleep 31 >/dev/null 2>&1 &');
    expect(started.body.exitCode).toBe(0);
    const background = await command(
      t.sessionId,
      `for p in $(pgrep -xf 'sleep 31'); do ${cpuGroupOf('$p')}; done | sort -u`,
    );
    expect(background.body.stdout.trim()).toBe(group);

    // The runner's front, its Node, their spawners and the waiting zygote are in Docker's
    // group of the container.
    const runner = await command(
      t.sessionId,
      `pgrep -cf 'sandbox/runner/(front|main|run-spawner|zygote)'; ` +
        `for p in $(pgrep -f 'sandbox/runner/(front|main|run-spawner|zygote)'); do ${cpuGroupOf('$p')}; done | sort -u`,
    );
    const [count, ...groups] = runner.body.stdout.trim().split('\n');
    expect(Number(count)).toBeGreaterThanOrEqual(5);
    expect(groups).toHaveLength(1);
    expect(groups[0]).toMatch(/^\/docker\/[0-9a-f]{64}$/);
  });

  it('keeps moves into a CPU group from waiting on the kernel (favordynmods on a hierarchy)', async () => {
    // Without it each run waited 7-20 ms for an RCU grace period when entering its group.
    const mountinfo = await readFile('/proc/self/mountinfo', 'utf8');
    expect(favorsDynmods(mountinfo)).toBe(true);
    expect(mountinfo).toContain(` ${FAVOR_DYNMODS_MOUNT} `);
    // The hierarchy has no controller and holds nothing: the sandbox's processes stay at its root.
    const own = await command(t.sessionId, `grep ':name=${FAVOR_DYNMODS_NAME}:' /proc/self/cgroup`);
    expect(own.body.stdout).toMatch(new RegExp(`^\\d+:name=${FAVOR_DYNMODS_NAME}:/\n$`));
  });

  it("holds the session's CPU limit: a second of spinning gets 0.25 CPU, not more", async () => {
    const spin = await command(t.sessionId, "timeout 1 sh -c 'while :; do :; done'; true");
    expect(spin.body.exitCode).toBe(0);
    expect(spin.body.cpuTime).toBeGreaterThan(100);
    expect(spin.body.cpuTime).toBeLessThan(450);
    const group = (await command(t.sessionId, cpuGroupOf('self'))).body.stdout.trim();
    const stat = await readFile(join(CPU_MOUNT, group, 'cpu.stat'), 'utf8');
    expect(Number(/nr_throttled (\d+)/.exec(stat)?.[1])).toBeGreaterThan(0);
  });

  it('gives a session the CPU limit it asked for, from the pool or not, and removes its group with it', async () => {
    const sessionId = await t.api.createSession({ resourceLimits: { cpu: 0.5 } });
    const group = (await command(sessionId, cpuGroupOf('self'))).body.stdout.trim();
    expect(await readFile(join(CPU_MOUNT, group, 'cpu.cfs_quota_us'), 'utf8')).toBe('50000\n');
    const spin = await command(sessionId, "timeout 1 sh -c 'while :; do :; done'; true");
    expect(spin.body.cpuTime).toBeGreaterThan(300);
    expect(spin.body.cpuTime).toBeLessThan(700);

    expect((await t.api.deleteSession(sessionId)).status).toBe(200);
    await expect(access(join(CPU_MOUNT, group))).rejects.toThrow();
  });

  it('removes groups that no container has at its reconcile, once a minute old', async () => {
    const stray = join(nodeGroups(), 'sbx-left-by-a-crash');
    await mkdir(stray);
    const young = join(nodeGroups(), 'sbx-being-made');
    await mkdir(young);
    const twoMinutesAgo = new Date(Date.now() - 120_000);
    await utimes(stray, twoMinutesAgo, twoMinutesAgo);
    const own = (await command(t.sessionId, cpuGroupOf('self'))).body.stdout.trim();
    await runtime?.reconcile();
    await expect(access(stray)).rejects.toThrow();
    await access(join(CPU_MOUNT, own)); // a live session's group stays
    // One made in the last minute may belong to a container being made after the listing.
    await access(young);
    await rmdir(young);
  });
});
