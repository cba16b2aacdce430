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
    for (const address of spec.addresses) await ip('route', 'add', `${address}/32`, 'via', inside);
    listener = spawn('ip', ['netns', 'exec', ns, process.execPath, '-e', await spec.script()]);
    for (const address of [inside, ...spec.addresses]) {
      let up = false;
      for (let i = 0; i < 50 && !up; i += 1) {
        up = await spec.isUp(address);
        if (!up) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect([address, up]).toEqual([address, true]);
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
