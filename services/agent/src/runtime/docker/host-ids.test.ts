import { chmod, mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openToSandboxRoot, remapBase, SandboxHostIds } from './host-ids';

describe('remapBase', () => {
  it('reads the mapping from the root directory of a remapping engine', () => {
    expect(
      remapBase({
        SecurityOptions: ['name=seccomp,profile=builtin', 'name=userns'],
        DockerRootDir: '/var/lib/docker/200000.200000',
      }),
    ).toEqual({ uid: 200000, gid: 200000 });
    expect(
      remapBase({ SecurityOptions: ['name=userns'], DockerRootDir: '/srv/docker/165536.165537/' }),
    ).toEqual({ uid: 165536, gid: 165537 });
  });

  it('finds none on an engine that does not remap, whatever its root is named', () => {
    expect(
      remapBase({
        SecurityOptions: ['name=seccomp,profile=builtin', 'name=cgroupns'],
        DockerRootDir: '/var/lib/docker/200000.200000',
      }),
    ).toBeUndefined();
    expect(remapBase({})).toBeUndefined();
  });

  it('refuses a remapping engine whose root does not name the mapping', () => {
    expect(() =>
      remapBase({ SecurityOptions: ['name=userns'], DockerRootDir: '/var/lib/docker' }),
    ).toThrow(/does not name the mapping/);
  });
});

describe('SandboxHostIds', () => {
  it('shifts the sandbox user by the mapping it learned, and back when it is gone', () => {
    const ids = new SandboxHostIds();
    expect([ids.uid, ids.gid, ids.rootUid, ids.remapped]).toEqual([1000, 1000, 0, false]);
    ids.learn({ SecurityOptions: ['name=userns'], DockerRootDir: '/var/lib/docker/200000.300000' });
    expect([ids.uid, ids.gid, ids.rootUid, ids.remapped]).toEqual([201000, 301000, 200000, true]);
    ids.learn({ SecurityOptions: [], DockerRootDir: '/var/lib/docker' });
    expect([ids.uid, ids.gid, ids.remapped]).toEqual([1000, 1000, false]);
  });
});

describe('openToSandboxRoot', () => {
  const remapped = () => {
    const ids = new SandboxHostIds();
    ids.learn({ SecurityOptions: ['name=userns'], DockerRootDir: '/var/lib/docker/100000.100000' });
    return ids;
  };
  let top: string;
  beforeEach(async () => {
    top = await mkdtemp(join(tmpdir(), 'host-ids-'));
  });
  afterEach(async () => {
    await rm(top, { recursive: true });
  });

  it('gives the directory to the sandbox root group, searchable only', async () => {
    const dir = join(top, 'workspaces');
    await mkdir(dir, { mode: 0o700 });
    await chmod(top, 0o711);
    await openToSandboxRoot(dir, remapped());
    const seen = await stat(dir);
    expect([seen.uid, seen.gid, seen.mode & 0o777]).toEqual([0, 100000, 0o710]);
  });

  it('names the directory above that the sandbox root cannot pass', async () => {
    const dir = join(top, 'workspaces');
    await mkdir(dir, { mode: 0o700 });
    await chmod(top, 0o700);
    await expect(openToSandboxRoot(dir, remapped())).rejects.toThrow(
      `give ${top} search permission for others`,
    );
  });

  it('leaves the directory alone on an engine that does not remap', async () => {
    await chmod(top, 0o700);
    await openToSandboxRoot(top, new SandboxHostIds());
    expect((await stat(top)).mode & 0o777).toBe(0o700);
  });
});
