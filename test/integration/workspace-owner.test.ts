import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import {
  chmod,
  chown,
  mkdtemp,
  readFile,
  rm,
  stat,
  statfs,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { LoopWorkspaces, SandboxHostIds } from '@sandbox/agent';
import { createLogger } from '@sandbox/logger';

/**
 * A workspace disk made while the engine mapped the sandbox user elsewhere (ADR 32: the
 * remapping switched on, or off, since) is the user's again when its sandbox comes back:
 * what the user owned moves to the user's host uid now, nothing else changes owner. Real loop
 * devices and ext4, no Docker.
 */
const run = promisify(execFile);
const logger = createLogger({ name: 'test', level: 'silent' });
const engine = (base?: number) => {
  const ids = new SandboxHostIds();
  ids.learn(
    base === undefined
      ? { SecurityOptions: [] }
      : { SecurityOptions: ['name=userns'], DockerRootDir: `/var/lib/docker/${base}.${base}` },
  );
  return ids;
};

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'workspace-owner-'));
});
afterEach(async () => {
  await new LoopWorkspaces(dir, logger, engine()).destroy('ses_owner').catch(() => undefined);
  await rm(dir, { recursive: true, force: true });
});

/** uid:gid of each path under the mount. */
async function owners(mount: string, paths: string[]): Promise<string[]> {
  const { stdout } = await run('stat', ['-c', '%n %u:%g', ...paths.map((p) => join(mount, p))]);
  return stdout
    .trim()
    .split('\n')
    .map((line) => line.replace(`${mount}/`, '').replace(mount, '.'));
}

it.each([
  ['on', undefined, 100000],
  ['off', 100000, undefined],
])(
  "gives the user's files to its new host uid when remapping was switched %s",
  async (_switched, before, after) => {
    const made = new LoopWorkspaces(dir, logger, engine(before));
    await made.create('ses_owner', 16);
    const mount = await made.hostPath('ses_owner');
    const oldUser = (before ?? 0) + 1000;
    // The user's files, a link of the user's, and one file the sandbox's root made.
    await writeFile(join(mount, 'mine.txt'), 'mine');
    await chown(join(mount, 'mine.txt'), oldUser, oldUser);
    await symlink('mine.txt', join(mount, 'link'));
    await run('chown', ['-h', `${oldUser}:${oldUser}`, join(mount, 'link')]);
    await writeFile(join(mount, 'roots.txt'), 'root');
    await chown(join(mount, 'roots.txt'), before ?? 0, before ?? 0);

    const back = new LoopWorkspaces(dir, logger, engine(after));
    expect(await back.attach('ses_owner')).toBe(true);
    const newUser = (after ?? 0) + 1000;
    expect(await owners(mount, ['', 'mine.txt', 'link', 'roots.txt'])).toEqual([
      `. ${newUser}:${newUser}`,
      `mine.txt ${newUser}:${newUser}`,
      `link ${newUser}:${newUser}`,
      `roots.txt ${before ?? 0}:${before ?? 0}`,
    ]);
    expect((await stat(join(mount, 'mine.txt'))).size).toBe(4);
  },
);

it('leaves a disk of the current mapping as it is', async () => {
  const workspaces = new LoopWorkspaces(dir, logger, engine(100000));
  await workspaces.create('ses_owner', 16);
  const mount = await workspaces.hostPath('ses_owner');
  await writeFile(join(mount, 'other.txt'), 'x');
  await chown(join(mount, 'other.txt'), 4242, 4242);
  expect(await workspaces.attach('ses_owner')).toBe(true);
  expect(await owners(mount, ['', 'other.txt'])).toEqual([
    '. 101000:101000',
    'other.txt 4242:4242',
  ]);
});

it("keeps each disk image the agent's alone, an older one too", async () => {
  const workspaces = new LoopWorkspaces(dir, logger, engine(100000));
  await workspaces.create('ses_owner', 16);
  const image = join(dir, 'ses_owner.ext4');
  expect((await stat(image)).mode & 0o777).toBe(0o600);
  await chmod(image, 0o644); // as agents before it made them
  expect(await workspaces.attach('ses_owner')).toBe(true);
  expect((await stat(image)).mode & 0o777).toBe(0o600);
});

it('keeps a disk made before the copy-on-write store where it is; clones go to the store, sharing blocks', async () => {
  const before = new LoopWorkspaces(dir, logger, engine());
  await before.create('ses_owner', 64);
  await writeFile(join(await before.hostPath('ses_owner'), 'old.txt'), 'old');
  const workspaces = new LoopWorkspaces(dir, logger, engine());
  await workspaces.prepare({ sizeGb: 1 });
  const made = ['ses_fork', 'ses_new', 'ses_new_fork'];
  try {
    expect(await workspaces.attach('ses_owner')).toBe(true);
    expect(existsSync(join(dir, 'ses_owner.ext4'))).toBe(true);
    // A clone of the older disk: a whole copy, into the store.
    await workspaces.clone('ses_owner', [{ sessionId: 'ses_fork', labels: {} }]);
    expect(existsSync(join(dir, '.disks', 'ses_fork.ext4'))).toBe(true);
    await workspaces.create('ses_fork', 64);
    const fork = await workspaces.hostPath('ses_fork');
    expect(await readFile(join(fork, 'old.txt'), 'utf8')).toBe('old');
    await writeFile(join(fork, 'new.txt'), 'fork');
    expect(existsSync(join(await workspaces.hostPath('ses_owner'), 'new.txt'))).toBe(false);

    // A disk of the store with 20 MB in it: its clone takes (almost) no block of its own.
    await workspaces.create('ses_new', 64);
    await run('sh', [
      '-c',
      `head -c 20000000 /dev/urandom > ${await workspaces.hostPath('ses_new')}/data && sync`,
    ]);
    const used = async () => {
      const stats = await statfs(join(dir, '.disks'));
      return (stats.blocks - stats.bfree) * stats.bsize;
    };
    const usedBefore = await used();
    await workspaces.clone('ses_new', [{ sessionId: 'ses_new_fork', labels: {} }]);
    expect((await used()) - usedBefore).toBeLessThan(5 * 1024 * 1024);
  } finally {
    for (const slot of made) await workspaces.destroy(slot);
    await workspaces.destroy('ses_owner');
    await workspaces.close();
  }
  expect(readFileSync('/proc/self/mounts', 'utf8')).not.toContain(`${dir}/`);
});

it('thaws, at the next start, a disk that an agent stopped mid-fork left frozen', async () => {
  const crashed = new LoopWorkspaces(dir, logger, engine());
  await crashed.create('ses_owner', 16);
  const mount = await crashed.hostPath('ses_owner');
  // As a clone cut short leaves it: frozen, and its marker naming it.
  await run('fsfreeze', ['-f', mount]);
  await writeFile(join(dir, '.frozen-ses_owner'), mount);
  try {
    await new LoopWorkspaces(dir, logger, engine()).prepare();
    const wrote = writeFile(join(mount, 'after.txt'), 'thawed').then(() => 'written');
    const late = new Promise((resolve) => setTimeout(() => resolve('still frozen'), 5000));
    expect(await Promise.race([wrote, late])).toBe('written');
    expect(existsSync(join(dir, '.frozen-ses_owner'))).toBe(false);
  } finally {
    await run('fsfreeze', ['-u', mount]).catch(() => undefined);
  }
});
