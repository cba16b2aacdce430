import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';

/**
 * Addresses a sandbox must never reach, each a real listener on this machine: a network
 * namespace behind a veth pair holds a private address and the metadata address, so that no
 * packet of a test ever leaves the machine.
 */
export const PRIVATE_ADDRESS = '10.199.77.2';
export const METADATA_ADDRESS = '169.254.169.254';
/** The port the forbidden listeners answer on ('reached'). */
export const FORBIDDEN_PORT = 18080;

const run = promisify(execFile);

/** A shell command that prints `reached` when host:port answers, else `blocked`. */
export const probe = (host: string, port: number): string =>
  `curl -s --max-time 3 http://${host}:${port}/ || echo blocked`;

async function ip(...args: string[]): Promise<void> {
  await run('ip', args);
}

/**
 * Registers `beforeAll`/`afterAll` that make the forbidden listeners answer (checked from the
 * host, so that a `blocked` in a sandbox means it was refused) and take them down. Call it
 * before the stack's fixture, so that the stack starts once they answer.
 */
export function useForbiddenListeners(): void {
  const tag = randomBytes(3).toString('hex');
  const ns = `sbxt-${tag}`;
  const hostSide = `vh${tag}`;
  const nsSide = `vn${tag}`;
  let listener: ChildProcess | undefined;

  beforeAll(async () => {
    await ip('netns', 'add', ns);
    await ip('link', 'add', hostSide, 'type', 'veth', 'peer', 'name', nsSide);
    await ip('link', 'set', nsSide, 'netns', ns);
    await ip('addr', 'add', '10.199.77.1/24', 'dev', hostSide);
    await ip('link', 'set', hostSide, 'up');
    await ip('netns', 'exec', ns, 'ip', 'addr', 'add', `${PRIVATE_ADDRESS}/24`, 'dev', nsSide);
    await ip('netns', 'exec', ns, 'ip', 'addr', 'add', `${METADATA_ADDRESS}/32`, 'dev', nsSide);
    await ip('netns', 'exec', ns, 'ip', 'link', 'set', nsSide, 'up');
    await ip('netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up');
    await ip('netns', 'exec', ns, 'ip', 'route', 'add', 'default', 'via', '10.199.77.1');
    await ip('route', 'add', `${METADATA_ADDRESS}/32`, 'via', PRIVATE_ADDRESS);
    listener = spawn('ip', [
      'netns',
      'exec',
      ns,
      process.execPath,
      '-e',
      `require('http').createServer((q, s) => s.end('reached')).listen(${FORBIDDEN_PORT}, '0.0.0.0')`,
    ]);
    for (const address of [PRIVATE_ADDRESS, METADATA_ADDRESS]) {
      for (let i = 0; i < 50; i += 1) {
        const { stdout } = await run('sh', ['-c', probe(address, FORBIDDEN_PORT)]);
        if (stdout === 'reached') break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect((await run('sh', ['-c', probe(address, FORBIDDEN_PORT)])).stdout).toBe('reached');
    }
  });

  afterAll(async () => {
    listener?.kill();
    await ip('route', 'del', `${METADATA_ADDRESS}/32`).catch(() => undefined);
    await ip('link', 'del', hostSide).catch(() => undefined);
    await ip('netns', 'del', ns).catch(() => undefined);
  });
}
