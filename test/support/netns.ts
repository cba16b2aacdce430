import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';

const run = promisify(execFile);

async function ip(...args: string[]): Promise<void> {
  await run('ip', args);
}

/** A shell command's output (a failed command gives what it printed). */
export async function shell(command: string): Promise<string> {
  return (await run('sh', ['-c', command])).stdout;
}

/**
 * Takes down what an earlier run, killed before its `afterAll`, left holding `subnet`: a
 * namespace with no process inside (its listener died with the run) and its veth pair. Left
 * up, its route to the subnet would shadow ours, and every check would be refused. A
 * namespace that still holds a process belongs to a run going on now: that is an error.
 */
async function removeStale(subnet: string): Promise<void> {
  const { stdout } = await run('ip', ['-o', '-4', 'addr', 'show']);
  for (const line of stdout.split('\n')) {
    const [, tag, address] = /^\d+:\s+vh([0-9a-f]{6})\S*\s+inet (\S+)\//.exec(line) ?? [];
    if (tag === undefined || !address?.startsWith(`${subnet}.`)) continue;
    const ns = `sbxt-${tag}`;
    const pids = (await run('ip', ['netns', 'pids', ns]).catch(() => ({ stdout: '' }))).stdout;
    if (pids.trim() !== '') {
      throw new Error(`${subnet}.0/24 is held by namespace ${ns} of a test running now`);
    }
    await ip('link', 'del', `vh${tag}`).catch(() => undefined);
    await ip('netns', 'del', ns).catch(() => undefined);
  }
}

/** How long the listeners may take to answer (a loaded machine starts Node slowly). */
const UP_WITHIN_MS = 30_000;

export interface ListenerNamespace {
  /** The first three bytes of the /24 between host (.1) and namespace (.2), e.g. `10.199.77`. */
  subnet: string;
  /** More addresses held in the namespace, reached from the host through a route each. */
  addresses: readonly string[];
  /** Node code the listeners run in the namespace. */
  script: () => Promise<string> | string;
  /** Whether `address` answers as the listeners should (checked from the host). */
  isUp: (address: string) => Promise<boolean>;
}

/**
 * Registers `beforeAll`/`afterAll` that make real listeners answer at addresses of a network
 * namespace behind a veth pair on this machine (so that no packet of a test ever leaves it),
 * checked from the host before any test runs; then take them down.
 */
export function useListenerNamespace(spec: ListenerNamespace): void {
  const tag = randomBytes(3).toString('hex');
  const ns = `sbxt-${tag}`;
  const hostSide = `vh${tag}`;
  const nsSide = `vn${tag}`;
  const inside = `${spec.subnet}.2`;
  let listener: ChildProcess | undefined;

  beforeAll(async () => {
    await removeStale(spec.subnet);
    await ip('netns', 'add', ns);
    await ip('link', 'add', hostSide, 'type', 'veth', 'peer', 'name', nsSide);
    await ip('link', 'set', nsSide, 'netns', ns);
    await ip('addr', 'add', `${spec.subnet}.1/24`, 'dev', hostSide);
    await ip('link', 'set', hostSide, 'up');
    await ip('netns', 'exec', ns, 'ip', 'addr', 'add', `${inside}/24`, 'dev', nsSide);
    for (const address of spec.addresses) {
      await ip('netns', 'exec', ns, 'ip', 'addr', 'add', `${address}/32`, 'dev', nsSide);
    }
    await ip('netns', 'exec', ns, 'ip', 'link', 'set', nsSide, 'up');
    await ip('netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up');
    await ip('netns', 'exec', ns, 'ip', 'route', 'add', 'default', 'via', `${spec.subnet}.1`);
    for (const address of spec.addresses) {
      await ip('route', 'replace', `${address}/32`, 'via', inside);
    }
    const started = spawn('ip', ['netns', 'exec', ns, process.execPath, '-e', await spec.script()]);
    listener = started;
    let stderr = '';
    let exited: string | undefined;
    started.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    started.on('exit', (code, signal) => (exited = `exited (${signal ?? code})`));
    const deadline = Date.now() + UP_WITHIN_MS;
    for (const address of [inside, ...spec.addresses]) {
      let up = await spec.isUp(address);
      while (!up && exited === undefined && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        up = await spec.isUp(address);
      }
      const state = up
        ? 'up'
        : `${exited ?? `not up within ${UP_WITHIN_MS} ms`}; stderr: ${stderr}`;
      expect([address, state]).toEqual([address, 'up']);
    }
  });

  afterAll(async () => {
    listener?.kill();
    for (const address of spec.addresses) {
      await ip('route', 'del', `${address}/32`).catch(() => undefined);
    }
    await ip('link', 'del', hostSide).catch(() => undefined);
    await ip('netns', 'del', ns).catch(() => undefined);
  });
}
