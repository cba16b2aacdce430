import { execFile } from 'node:child_process';
import { access, readdir, readlink, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { RUNNER_FRONT_PATH, RUNNER_LINK_DIR, RUNNER_LINK_ENV } from '@sandbox/contract';
import { containerProcesses, docker, onGvisor, sessionContainer } from '../support/stack';
import type { ExecutionResult } from '@sandbox/sdk';
import { useStackWithAccount } from '../support/use-stack';

/**
 * The runner is out of reach of the code it runs (ADR 28): its front (ADR 34), the front's
 * spawner, the runner, its spawner, the zygote waiting for the next code run and the
 * container's keep-alive keep root as their real and saved uid,
 * so no process of the user's can signal, trace or read them, or move them into its CPU group;
 * what a run used is measured outside the run.
 */

const t = useStackWithAccount('paid');
/**
 * The session under test, with a whole CPU: each case spawns a handful of processes, at 150 ms
 * a spawn on gVisor at 0.25 CPU (2 minutes for the file). What the user may reach of the
 * runner does not depend on it.
 */
let sessionId: string;

/** A run's result; a run that was not answered 200 fails the test with what it was answered. */
async function ran(body: Record<string, unknown>, timeout = 20): Promise<ExecutionResult> {
  const answer = await t.api.execute<ExecutionResult>(sessionId, { ...body, timeout });
  if (answer.status !== 200) throw new Error(`run answered ${answer.status}: ${answer.text}`);
  return answer.body;
}
const exec = (command: string, timeout?: number) => ran({ command }, timeout);
const code = (source: string) => ran({ code: source });

/** `ok` when `attempt` succeeded, `refused` when it failed. */
const attempt = (command: string) => `(${command}) >/dev/null 2>&1 && echo ok || echo refused`;

/** The pid (in the sandbox) of the first process whose command line matches `pattern`. */
const pidOf = (pattern: string) =>
  `$(ps -eo pid=,args= | grep -E '${pattern}' | grep -v grep | head -1 | awk '{print $1}')`;

const RUNNER = pidOf('^ *[0-9]+ node (--no-memory-reducer )?/opt/sandbox/runner/main.js$');
const FRONT = pidOf('^ *[0-9]+ /opt/sandbox/runner/front$');
/** The runner's spawner (the first one, whichever) and the front's (its child). */
const SPAWNER = pidOf('^ *[0-9]+ /opt/sandbox/runner/run-spawner');
const FRONT_SPAWNER =
  `$(ps -eo pid=,ppid=,args= | awk -v front=${FRONT} ` +
  `'$2 == front && $3 == "/opt/sandbox/runner/run-spawner" {print $1; exit}')`;
const ZYGOTE = pidOf('opt/sandbox/runner/zygote.js$');
const KEEP_ALIVE = pidOf('^ *[0-9]+ sleep infinity$');

/** Real, effective, saved uid of `pid`. */
const uids = (pid: string) => `awk '/^Uid:/ {print $2, $3, $4}' /proc/${pid}/status`;

beforeAll(async () => {
  sessionId = await t.api.createSession({ resourceLimits: { cpu: 1 } });
  await code('1'); // a zygote waits for the next code run
  // On gVisor its start shares the session's CPU (no CPU split there): about a second.
  for (const deadline = Date.now() + 15_000; Date.now() < deadline;) {
    if ((await exec(`echo ${ZYGOTE}`)).stdout.trim() !== '') return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error('no zygote started');
});

describe("the runner, out of the user code's reach", () => {
  it('keeps root underneath the user it works as; user processes are the user in full', async () => {
    // About fifty processes: on gVisor at 0.25 CPU (150 ms a spawn), 20 s in a slow hour.
    const run = await exec(
      [FRONT, FRONT_SPAWNER, RUNNER, SPAWNER, ZYGOTE, KEEP_ALIVE, '$$']
        .map((pid) => uids(pid))
        .join('; '),
      60,
    );
    expect(run.stdout).toBe(
      // On gVisor the waiting zygote is the user's own (its exec could not become the user
      // later): docs/security.md.
      [
        '0 1000 0',
        '0 1000 0',
        '0 1000 0',
        '0 1000 0',
        onGvisor ? '1000 1000 1000' : '0 1000 1000',
        '0 0 0',
        '1000 1000 1000',
        '',
      ].join('\n'),
    );
  }, 90_000);

  it("arms the next runs' shells as the user in full, holding nothing but their pipes (ADR 48)", async () => {
    // The waiting ones: the shell of this run (and its subshells) closed its fd 3.
    const run = await exec(
      `for p in $(pgrep -f '^/bin/bash -c IFS= read -r -u 3 -N 2 __sandbox_shell '); do ` +
        `[ -e /proc/$p/fd/3 ] || continue; ${uids('$p')}; ` +
        `awk '/^Cap(Inh|Prm|Eff|Bnd|Amb):/ {print $2}' /proc/$p/status | sort -u; ` +
        `ls /proc/$p/fd | sort -n | tr '\\n' ' '; echo; echo --; done`,
    );
    const shells = run.stdout.split('--\n').filter(Boolean);
    expect(shells.length).toBeGreaterThanOrEqual(1);
    for (const shell of shells) expect(shell).toBe('1000 1000 1000\n0000000000000000\n0 1 2 3 \n');
  });

  it.each([
    ['kill the front', `kill -KILL ${FRONT}`],
    ['stop the front', `kill -STOP ${FRONT}`],
    ["kill the front's spawner", `kill -KILL ${FRONT_SPAWNER}`],
    ["read the front's memory", `head -c 1 /proc/${FRONT}/mem`],
    ['kill the runner', `kill -KILL ${RUNNER}`],
    ['stop the runner', `kill -STOP ${RUNNER}`],
    ['kill the spawner', `kill -KILL ${SPAWNER}`],
    ['kill the keep-alive', `kill -KILL ${KEEP_ALIVE}`],
    ["read the runner's memory (ptrace access)", `head -c 1 /proc/${RUNNER}/mem`],
    ["read the spawner's memory", `head -c 1 /proc/${SPAWNER}/mem`],
    // gVisor lets the user read these (its /proc checks only the effective uid), and its
    // waiting zygote is the user's: see docs/security.md; the case below shows that the
    // runner's environment holds nothing new.
    ...(onGvisor
      ? []
      : [
          ["read the front's environment", `head -c 1 /proc/${FRONT}/environ`],
          ["list the front's open files", `ls /proc/${FRONT}/fd`],
          ["read the runner's environment", `head -c 1 /proc/${RUNNER}/environ`],
          ["list the runner's open files", `ls /proc/${RUNNER}/fd`],
          ["list the spawner's open files", `ls /proc/${SPAWNER}/fd`],
          ["read the waiting zygote's memory", `head -c 1 /proc/${ZYGOTE}/mem`],
        ]),
    ['move the runner into its CPU group', `echo ${RUNNER} > /run/sandbox/cpu.procs`],
  ])('cannot %s', async (_what, command) => {
    expect((await exec(attempt(command))).stdout).toBe('refused\n');
  });

  it.each([
    ['runner', RUNNER],
    ['front', FRONT],
  ])("finds nothing in the %s's environment that its own runs lack", async (_what, pid) => {
    const run = await exec(
      `tr '\\0' '\\n' < /proc/${pid}/environ 2>/dev/null | while read -r line; do ` +
        `env | grep -qxF "$line" || echo "only the runner's: \${line%%=*}"; done; echo checked`,
    );
    expect(run.stdout).toBe('checked\n');
  });
});

describe('the runner after a kill, and the user without a way back to root', () => {
  it('leaves the runner as it was after a kill of everything the user can reach', async () => {
    const before = (await exec(`echo ${FRONT} ${FRONT_SPAWNER} ${RUNNER} ${SPAWNER}`)).stdout;
    expect(before).toMatch(/^\d+ \d+ \d+ \d+\n$/);
    // Every process the caller may signal but itself: the waiting zygote among them.
    const killed = await exec('kill -KILL -1; echo done');
    expect(killed.stdout).toBe('done\n');
    const after = await exec(`echo ${FRONT} ${FRONT_SPAWNER} ${RUNNER} ${SPAWNER}`);
    expect(after.exitCode).toBe(0);
    expect(after.stdout).toBe(before);
    const next = await code("console.log('still here')");
    expect(next.stdout).toBe('still here\n');
  });

  it("keeps no capability in its spawners' bounding sets but the one a zygote takes", async () => {
    // Narrowed once, at the spawner's start: a run's start then drops CAP_SETUID alone
    // (spawner-start.c, narrow_bounding_set); every run ends with none (the cases below).
    const run = await exec(
      [FRONT_SPAWNER, SPAWNER].map((pid) => `grep '^CapBnd:' /proc/${pid}/status`).join('; '),
    );
    expect(run.stdout).toBe('CapBnd:\t0000000000000080\n'.repeat(2));
  });

  it('runs code as the user in full: no capability left, no way back to root', async () => {
    const run = await code(
      [
        "import { readFileSync } from 'node:fs';",
        "const status = readFileSync('/proc/self/status', 'utf8');",
        "for (const key of ['Uid', 'Gid', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb', 'NoNewPrivs'])",
        "  console.log(status.split('\\n').find((l) => l.startsWith(key + ':')));",
        'for (const change of [() => process.seteuid(0), () => process.setuid(0), () => process.setgid(0)]) {',
        "  try { change(); console.log('changed', process.geteuid()); } catch (err) { console.log(err.code); }",
        '}',
      ].join('\n'),
    );
    expect(run.stdout).toBe(
      [
        'Uid:\t1000\t1000\t1000\t1000',
        'Gid:\t1000\t1000\t1000\t1000',
        'CapPrm:\t0000000000000000',
        'CapEff:\t0000000000000000',
        'CapBnd:\t0000000000000000',
        // gVisor's /proc/self/status has no such lines.
        ...(onGvisor
          ? ['undefined', 'undefined']
          : ['CapAmb:\t0000000000000000', 'NoNewPrivs:\t1']),
        'EPERM',
        'EPERM',
        'EPERM',
        '',
      ].join('\n'),
    );
  });
});

/** Runs `script` in the session's container as root (what no user process is): its output. */
async function asContainerRoot(sessionId: string, script: string): Promise<string> {
  const container = await sessionContainer(sessionId);
  const { stdout, stderr } = await promisify(execFile)('docker', [
    'exec',
    '-u',
    '0',
    container!.Id,
    'sh',
    '-c',
    `${script} 2>&1; true`,
  ]);
  return stdout + stderr;
}

/** The inodes of the sockets host process `pid` holds. */
async function socketsOf(pid: number | 'self'): Promise<Set<string>> {
  const inodes = new Set<string>();
  for (const fd of await readdir(`/proc/${pid}/fd`)) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode !== undefined) inodes.add(inode);
  }
  return inodes;
}

/** The host directory of the session's runner link, from its container's label. */
async function linkDirOf(sessionId: string): Promise<string> {
  const container = await sessionContainer(sessionId);
  const { Config } = await docker.getContainer(container!.Id).inspect();
  const name = Config.Labels[`${t.stack.agentConfig.labelPrefix}.runner-link`];
  expect(name).toMatch(/^[0-9a-f]{16}$/);
  return join(t.stack.agentConfig.workspaceDir, '.links', name!);
}

// gVisor's sandboxes have no link: their runner speaks over its exec stream (ADR 33).
(onGvisor ? describe.skip : describe)("the runner's socket to the agent (ADR 33)", () => {
  it("is out of the user's reach: the link directory cannot even be looked into", async () => {
    const run = await code(
      [
        "import { readdirSync, statSync } from 'node:fs';",
        "import { connect } from 'node:net';",
        `for (const look of [() => readdirSync('${RUNNER_LINK_DIR}'), () => statSync('${RUNNER_LINK_DIR}/agent.sock')])`,
        "  try { look(); console.log('seen'); } catch (err) { console.log(err.code); }",
        `const socket = connect('${RUNNER_LINK_DIR}/agent.sock');`,
        "socket.on('connect', () => { console.log('connected'); socket.destroy(); });",
        "socket.on('error', (err) => console.log(err.code));",
      ].join('\n'),
    );
    expect(run.stdout).toBe('EACCES\nEACCES\nEACCES\n');
  });

  it("is read-only to the sandbox's root: nothing can be put where the agent makes its socket", async () => {
    const said = await asContainerRoot(
      sessionId,
      `touch ${RUNNER_LINK_DIR}/x; ln -s /etc/passwd ${RUNNER_LINK_DIR}/agent.sock; mkdir ${RUNNER_LINK_DIR}/d`,
    );
    expect(said.match(/Read-only file system/g)).toHaveLength(3);
  });

  it("leaves the socket's path and the launch's token to no run", async () => {
    const run = await exec(
      `env | grep -c -e ${RUNNER_LINK_ENV.socket} -e ${RUNNER_LINK_ENV.token}`,
    );
    expect(run.stdout).toBe('0\n');
  });

  it("carries the runner's requests: its front's socket is connected to the agent's", async () => {
    await exec('true');
    // The front holds the link and hands the runner's Node its requests (ADR 34).
    const runner = (await containerProcesses(t.stack.agentConfig.nodeId, sessionId)).find(
      (p) => p.args === RUNNER_FRONT_PATH,
    );
    const mine = await socketsOf(runner!.pid);
    // The agent runs in this test's process. Unix sockets are listed in their own network
    // namespace (the sandbox's): each line names the socket's inode and its peer's.
    const { stdout } = await promisify(execFile)('nsenter', [
      '-t',
      String(runner!.pid),
      '-n',
      'ss',
      '-xn',
    ]);
    const agents = await socketsOf('self');
    const linked = stdout
      .split('\n')
      .map((line) => line.trim().split(/\s+/))
      .filter((f) => mine.has(f[5] ?? '') && agents.has(f[7] ?? ''));
    expect(linked).toHaveLength(1);
  });

  it('goes with its sandbox', async () => {
    const sessionId = await t.api.createSession();
    const dir = await linkDirOf(sessionId);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect((await t.api.deleteSession(sessionId)).status).toBe(200);
    await expect(access(dir)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe("a run's usage, measured outside it", () => {
  it('reports the CPU time and memory a code run used, whatever it writes or hooks', async () => {
    const run = await code(
      [
        "import { readdirSync, writeFileSync } from 'node:fs';",
        'const hold = Buffer.alloc(96 * 2 ** 20, 1);',
        // Spins for 300 ms of its own CPU, however busy the machine (a wall-clock loop got less).
        'const t0 = process.cpuUsage(); let n = 0; for (let u = process.cpuUsage(t0); u.user + u.system < 300_000; u = process.cpuUsage(t0)) n++;',
        // What a zygote once wrote its usage to, and any file of the runner's it can reach.
        "const forge = () => { for (const dir of ['/tmp/.sandbox-runner']) for (const f of readdirSync(dir)) writeFileSync(`${dir}/${f}`, 'timing 0 0.00 0 1\\n'); };",
        "process.on('exit', forge);",
        'forge();',
        'console.log(hold.length > 0, n > 0);',
      ].join('\n'),
    );
    expect(run.stdout).toBe('true true\n');
    expect(run.cpuTime).toBeGreaterThan(200);
    expect(run.memoryUsed).toBeGreaterThan(96 * 2 ** 20);
  });

  it('reports a file the run wrote, even with its times set back', async () => {
    const run = await exec('echo x > hidden.txt && touch -d 2000-01-01 hidden.txt');
    expect(run.filesWritten).toContain('hidden.txt');
  });
});
