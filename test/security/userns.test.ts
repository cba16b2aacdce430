import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { docker, onGvisor, sessionContainer, startStack, testWorkspaceDir } from '../support/stack';
import { useStackWithAccount } from '../support/use-stack';

/**
 * With the engine remapping user namespaces (ADR 32; `./scripts/test` turns it on and says so
 * with TEST_USERNS=1): whatever escapes a sandbox is an unprivileged uid of the host, never
 * root, on either runtime, while the sandbox itself still sees root and its user as before.
 */
const t = useStackWithAccount('paid', { session: true });

/** Real, effective, saved and filesystem uid of host process `pid`. */
async function hostUids(pid: number): Promise<number[]> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return (/^Uid:\s+(.*)$/m.exec(status)?.[1] ?? '').split(/\s+/).map(Number);
}

/** Where the engine maps a sandbox's root: from its root directory's name (none: 0). */
async function remapBase(): Promise<number> {
  const info = (await docker.info()) as { SecurityOptions: string[]; DockerRootDir: string };
  if (!info.SecurityOptions.some((option) => option.includes('name=userns'))) return 0;
  return Number(/\/(\d+)\.\d+$/.exec(info.DockerRootDir)?.[1]);
}

const expected = process.env.TEST_USERNS === '1';

(expected ? describe : describe.skip)('user-namespace remapping', () => {
  let base = 0;
  beforeAll(async () => {
    base = await remapBase();
  });

  it('is on', () => {
    expect(base).toBeGreaterThanOrEqual(65536);
  });

  it('runs the sandbox as an unprivileged uid of the host', async () => {
    const container = await sessionContainer(t.sessionId);
    const { State } = await docker.getContainer(container!.Id).inspect();
    // runc: the container's init; gVisor: its Sentry.
    const uids = await hostUids(State.Pid);
    expect(uids).toEqual([base, base, base, base]);
    // Inside, root and the user are who they were.
    const inside = await t.api.execute<{ stdout: string }>(t.sessionId, {
      command: 'id -u',
    });
    expect(inside.body.stdout).toBe('1000\n');
  });

  (onGvisor ? it.skip : it)("runs the user's processes as the user's shifted uid", async () => {
    const started = await t.api.execute<{ stdout: string }>(t.sessionId, {
      command: 'sleep 30 & echo $!',
    });
    expect(started.status).toBe(200);
    const container = await sessionContainer(t.sessionId);
    const top = (await docker.getContainer(container!.Id).top({ ps_args: '-eo pid,uid,args' })) as {
      Processes: string[][];
    };
    const sleep = top.Processes.find((row) => row[2] === 'sleep 30');
    expect(sleep?.[1]).toBe(String(base + 1000));
    await t.api.execute(t.sessionId, { command: 'pkill -x sleep; true' });
  });

  it("gives the user's disk to the shifted uid on the host", async () => {
    const written = await t.api.execute<{ exitCode: number }>(t.sessionId, {
      command: 'echo hi > mine.txt',
    });
    expect(written.body.exitCode).toBe(0);
    const root = await stat(join(testWorkspaceDir(t.stack.nodeId), t.sessionId));
    const file = await stat(join(testWorkspaceDir(t.stack.nodeId), t.sessionId, 'mine.txt'));
    expect([root.uid, root.gid, file.uid, file.gid]).toEqual([
      base + 1000,
      base + 1000,
      base + 1000,
      base + 1000,
    ]);
  });

  it("raises the remapped root's kernel key quota to what the node's sandboxes need", async () => {
    // Every sandbox's root is one host uid: at the kernel's default quota (20,000 bytes of
    // keys) runc could not start more than about a hundred of them.
    const quota = (name: string) => `/proc/sys/kernel/keys/${name}`;
    const before = Number(await readFile(quota('maxbytes'), 'utf8'));
    const beforeKeys = Number(await readFile(quota('maxkeys'), 'utf8'));
    // A node taking more sandboxes than the host's quota now leaves room for.
    const sandboxes = Math.ceil(before / 400) + 50;
    const stack = await startStack({
      agentEnv: { AGENT_MAX_SANDBOXES: String(sandboxes), SANDBOX_POOL: '0' },
    });
    try {
      expect(Number(await readFile(quota('maxbytes'), 'utf8'))).toBeGreaterThanOrEqual(
        sandboxes * 400,
      );
      expect(Number(await readFile(quota('maxkeys'), 'utf8'))).toBeGreaterThanOrEqual(
        sandboxes * 4,
      );
    } finally {
      await stack.stop();
      // Back to what the host had (the suites' other agents need no more).
      await writeFile(quota('maxbytes'), `${before}\n`);
      await writeFile(quota('maxkeys'), `${beforeKeys}\n`);
    }
  });
});
