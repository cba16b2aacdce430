import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@sandbox/logger';
import { ensureKeyQuota, KEY_BYTES_PER_SANDBOX, KEYS_PER_SANDBOX } from './key-quota';

/** A directory standing for /proc/sys/kernel/keys, with the kernel's defaults. */
async function keysDir(maxkeys = 200, maxbytes = 20000): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'keys-'));
  await writeFile(join(dir, 'maxkeys'), `${maxkeys}\n`);
  await writeFile(join(dir, 'maxbytes'), `${maxbytes}\n`);
  return dir;
}

const read = async (dir: string, name: string) => Number(await readFile(join(dir, name), 'utf8'));

/** A logger whose lines are kept, parsed. */
function recordingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({
    name: 'test',
    level: 'info',
    destination: { write: (line: string) => void lines.push(JSON.parse(line) as never) },
  });
  return { logger, lines };
}

describe('ensureKeyQuota', () => {
  let dir: string;
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it("raises the kernel's default quota to what the node's sandboxes need", async () => {
    dir = await keysDir();
    const { logger, lines } = recordingLogger();
    await ensureKeyQuota(800, logger, dir);
    expect(await read(dir, 'maxkeys')).toBe(800 * KEYS_PER_SANDBOX);
    expect(await read(dir, 'maxbytes')).toBe(800 * KEY_BYTES_PER_SANDBOX);
    expect(lines.map((l) => l.sysctl)).toEqual(['kernel.keys.maxkeys', 'kernel.keys.maxbytes']);
  });

  it('never lowers a quota the host set higher', async () => {
    dir = await keysDir(1_000_000, 100);
    const { logger } = recordingLogger();
    await ensureKeyQuota(10, logger, dir);
    expect(await read(dir, 'maxkeys')).toBe(1_000_000);
    expect(await read(dir, 'maxbytes')).toBe(10 * KEY_BYTES_PER_SANDBOX);
  });

  it('says which sysctl to set when it may not write it, and goes on', async () => {
    dir = await keysDir();
    const { logger, lines } = recordingLogger();
    // A kernel file root may read but not write, as /proc/sys is in an unprivileged container.
    await rm(join(dir, 'maxbytes'));
    await symlink('/proc/self/oom_score', join(dir, 'maxbytes'));
    await ensureKeyQuota(800, logger, dir);
    expect(await read(dir, 'maxkeys')).toBe(800 * KEYS_PER_SANDBOX);
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 40,
        sysctl: `kernel.keys.maxbytes=${800 * KEY_BYTES_PER_SANDBOX}`,
      }),
    );
  });
});
