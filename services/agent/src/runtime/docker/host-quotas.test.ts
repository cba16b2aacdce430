import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createLogger } from '@sandbox/logger';
import { ensureHostQuotas, PER_SANDBOX } from './host-quotas';

/** A directory standing for /proc/sys, with the kernel's defaults for a user. */
async function sysDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'sys-'));
  const defaults: Record<string, number> = {
    'kernel/keys/maxkeys': 200,
    'kernel/keys/maxbytes': 20000,
    'fs/inotify/max_user_instances': 128,
    'fs/inotify/max_user_watches': 192536,
  };
  for (const [path, value] of Object.entries(defaults)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), `${value}\n`);
  }
  return dir;
}

const read = async (dir: string, path: string) => Number(await readFile(join(dir, path), 'utf8'));

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

describe('ensureHostQuotas', () => {
  let dir: string;
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it("raises the kernel's defaults for a user to what the node's sandboxes need", async () => {
    dir = await sysDir();
    const { logger, lines } = recordingLogger();
    await ensureHostQuotas(800, logger, dir);
    for (const [path, perSandbox] of Object.entries(PER_SANDBOX)) {
      expect(await read(dir, path)).toBe(800 * perSandbox);
    }
    expect(lines.map((l) => l.sysctl)).toEqual([
      'kernel.keys.maxkeys',
      'kernel.keys.maxbytes',
      'fs.inotify.max_user_instances',
      'fs.inotify.max_user_watches',
    ]);
  });

  it('never lowers a quota the host set higher', async () => {
    dir = await sysDir();
    await writeFile(join(dir, 'kernel/keys/maxkeys'), '1000000\n');
    const { logger } = recordingLogger();
    await ensureHostQuotas(10, logger, dir);
    expect(await read(dir, 'kernel/keys/maxkeys')).toBe(1_000_000);
    expect(await read(dir, 'kernel/keys/maxbytes')).toBe(20000); // 10 need 4,000
    expect(await read(dir, 'fs/inotify/max_user_instances')).toBe(10 * 128);
  });

  it('says which sysctl to set when it may not write it, and goes on', async () => {
    dir = await sysDir();
    const { logger, lines } = recordingLogger();
    // A kernel file root may read but not write, as /proc/sys is in an unprivileged container.
    await rm(join(dir, 'kernel/keys/maxbytes'));
    await symlink('/proc/self/oom_score', join(dir, 'kernel/keys/maxbytes'));
    await ensureHostQuotas(800, logger, dir);
    expect(await read(dir, 'fs/inotify/max_user_instances')).toBe(800 * 128);
    expect(lines).toContainEqual(
      expect.objectContaining({ level: 40, sysctl: `kernel.keys.maxbytes=${800 * 400}` }),
    );
  });
});
