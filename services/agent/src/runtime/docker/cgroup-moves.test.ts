import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@sandbox/logger';
import { ensureCheapCgroupMoves, FAVOR_DYNMODS_NAME, favorsDynmods } from './cgroup-moves';

const V1 = [
  '31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755',
  '32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu',
].join('\n');
const FAVORED = `${V1}\n90 23 0:61 / /run/x rw,relatime - cgroup cgroup rw,favordynmods,name=x`;

describe('favorsDynmods', () => {
  it('finds a cgroup hierarchy with favordynmods, v1 or v2, and nothing else', () => {
    expect(favorsDynmods(V1)).toBe(false);
    expect(favorsDynmods(FAVORED)).toBe(true);
    expect(
      favorsDynmods('25 30 0:22 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate,favordynmods'),
    ).toBe(true);
    // Not a cgroup file system: its option means nothing here.
    expect(favorsDynmods('40 23 0:40 / /mnt rw - tmpfs tmpfs rw,favordynmods')).toBe(false);
  });
});

describe('ensureCheapCgroupMoves', () => {
  const lines: Array<{ level: number; msg: string }> = [];
  const logger = createLogger({
    name: 'test',
    level: 'info',
    destination: { write: (line: string) => void lines.push(JSON.parse(line) as never) },
  });
  let dir: string;
  beforeEach(async () => {
    lines.length = 0;
    dir = join(await mkdtemp(join(tmpdir(), 'moves-')), 'mount');
  });
  afterEach(() => rm(join(dir, '..'), { recursive: true, force: true }));

  it('mounts a named hierarchy without controllers, with favordynmods, where containers can look', async () => {
    const mounts: string[][] = [];
    const ok = await ensureCheapCgroupMoves({
      logger,
      dir,
      mountinfo: () => Promise.resolve(V1),
      mount: (args) => {
        mounts.push(args);
        return Promise.resolve();
      },
    });
    expect(ok).toBe(true);
    expect(mounts).toEqual([
      ['-t', 'cgroup', '-o', `none,name=${FAVOR_DYNMODS_NAME},favordynmods`, 'cgroup', dir],
    ]);
    expect((await stat(dir)).mode & 0o777).toBe(0o755);
    expect(lines.map((l) => l.msg)).toEqual(['cgroup moves made cheap (favordynmods)']);
  });

  it('mounts nothing when a hierarchy already has it', async () => {
    const mount = jest.fn();
    expect(
      await ensureCheapCgroupMoves({
        logger,
        dir,
        mountinfo: () => Promise.resolve(FAVORED),
        mount,
      }),
    ).toBe(true);
    expect(mount).not.toHaveBeenCalled();
  });

  it('takes a mount made by another agent meanwhile as its own', async () => {
    const infos = [V1, FAVORED];
    const ok = await ensureCheapCgroupMoves({
      logger,
      dir,
      mountinfo: () => Promise.resolve(infos.shift() ?? FAVORED),
      mount: () => Promise.reject(new Error('mount: busy')),
    });
    expect(ok).toBe(true);
    expect(lines).toEqual([]);
  });

  it('warns and goes on where the kernel or the rights refuse', async () => {
    const ok = await ensureCheapCgroupMoves({
      logger,
      dir,
      mountinfo: () => Promise.resolve(V1),
      mount: () => Promise.reject(new Error('mount: bad option')),
    });
    expect(ok).toBe(false);
    expect(lines).toEqual([
      expect.objectContaining({ level: 40, msg: expect.stringContaining('favordynmods') }),
    ]);
  });
});
