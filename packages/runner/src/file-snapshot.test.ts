import { mkdtemp, mkdir, rename, rm, utimes, writeFile, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { CODE_FILE_PREFIX } from './code-file';
import { ChangeClock, changedSince } from './file-snapshot';
import { WORKSPACE } from './workspace-path';

let dir: string;
/** Outside the tree walked, as the runner's is. */
let clockDir: string;
let clock: ChangeClock;
const rel = (...parts: string[]) => posix.relative(WORKSPACE, join(dir, ...parts));
/** Past the coarse tick of the kernel's clock, so that "before" is before. */
const nextTick = () => new Promise((resolve) => setTimeout(resolve, 30));

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'changed-since-'));
  clockDir = await mkdtemp(join(tmpdir(), 'change-clock-'));
  clock = new ChangeClock(clockDir);
  await mkdir(join(dir, 'src/deep'), { recursive: true });
  await mkdir(join(dir, 'node_modules/pkg'), { recursive: true });
  for (const name of ['kept.txt', 'src/edited.ts', 'src/deep/mode.sh', 'old-name.txt']) {
    await writeFile(join(dir, name), 'before');
  }
});

afterEach(async () => {
  await clock.close();
  await rm(dir, { recursive: true, force: true });
  await rm(clockDir, { recursive: true, force: true });
});

it('makes its directory when it is missing (a first cell before any run made it)', async () => {
  const missing = new ChangeClock(join(clockDir, 'not/yet'));
  try {
    expect(typeof (await missing.read())).toBe('bigint');
  } finally {
    await missing.close();
  }
});

it('lists what changed after the clock was read, and nothing from before', async () => {
  await nextTick();
  const since = await clock.read();
  await writeFile(join(dir, 'src/edited.ts'), 'after');
  await writeFile(join(dir, 'src/deep/new.txt'), 'new');
  await chmod(join(dir, 'src/deep/mode.sh'), 0o755);
  await rename(join(dir, 'old-name.txt'), join(dir, 'renamed.txt'));
  // As `tar -x` or `cp -p` leave it: an mtime long ago, yet a new file.
  await writeFile(join(dir, 'unpacked.txt'), 'x');
  await utimes(join(dir, 'unpacked.txt'), new Date('2001-01-01'), new Date('2001-01-01'));
  await writeFile(join(dir, 'node_modules/pkg/index.js'), 'left out');
  await writeFile(join(dir, `${CODE_FILE_PREFIX}run.mjs`), 'left out');

  expect(await changedSince(dir, since)).toEqual(
    [
      rel('renamed.txt'),
      rel('src/deep/mode.sh'),
      rel('src/deep/new.txt'),
      rel('src/edited.ts'),
      rel('unpacked.txt'),
    ].sort(),
  );
});

it('lists nothing when the run changed nothing', async () => {
  await nextTick();
  const since = await clock.read();
  expect(await changedSince(dir, since)).toEqual([]);
});

it('reads on one marker, run after run, even once its path is removed', async () => {
  await nextTick();
  const first = await clock.read();
  await writeFile(join(dir, 'kept.txt'), 'by the first run');
  await nextTick();
  await rm(clockDir, { recursive: true, force: true });
  const second = await clock.read();
  expect(second).toBeGreaterThan(first);
  // The second run's list leaves out what the first one changed.
  expect(await changedSince(dir, first)).toEqual([rel('kept.txt')]);
  expect(await changedSince(dir, second)).toEqual([]);
});
