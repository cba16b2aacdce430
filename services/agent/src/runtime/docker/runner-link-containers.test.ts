import { mkdtempSync } from 'node:fs';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RUNNER_LINK_DIR } from '@sandbox/contract';
import { FakeContainers } from '../lifecycle/fake-containers';
import { dockerError } from '../lifecycle/test-fixtures';
import { RunnerLinkContainers } from './runner-link-containers';

const LABEL = 'io.sandbox.runner-link';

/** Docker in memory, where the `gvisor` runtime is a kernel of its own. */
class Containers extends FakeContainers {
  override ownKernel(runtime: string | undefined): Promise<boolean> {
    return Promise.resolve(runtime === 'gvisor');
  }
}

function setup(root = join(mkdtempSync(join(tmpdir(), 'links-')), '.links')) {
  const docker = new Containers([]);
  const owner = { uid: process.getuid!(), gid: process.getgid!() };
  const containers = new RunnerLinkContainers(docker, { root, label: LABEL, owner: () => owner });
  const create = (name: string, runtime?: string) =>
    containers.createAndStart({
      name,
      Labels: { 'io.sandbox.node': 'n1' },
      HostConfig: { Binds: ['/ws:/workspace'], ...(runtime ? { Runtime: runtime } : {}) },
    });
  const linkOf = (name: string) => docker.byName.get(name)!.options.Labels![LABEL]!;
  return { docker, root, owner, containers, create, linkOf };
}

describe('RunnerLinkContainers', () => {
  it("makes each container with a link directory of its own, the sandbox root's, bound read-only", async () => {
    const { docker, root, owner, create, linkOf } = setup();
    await create('sbx-ses_1');
    await create('sbx-ses_2');
    const link = linkOf('sbx-ses_1');
    expect(link).toMatch(/^[0-9a-f]{16}$/);
    expect(linkOf('sbx-ses_2')).not.toBe(link);
    expect(docker.byName.get('sbx-ses_1')!.options.HostConfig?.Binds).toEqual([
      '/ws:/workspace',
      `${join(root, link)}:${RUNNER_LINK_DIR}:ro`,
    ]);
    const made = await stat(join(root, link));
    expect(made.mode & 0o777).toBe(0o700);
    expect({ uid: made.uid, gid: made.gid }).toEqual(owner);
  });

  it('makes none for a sandbox on a kernel of its own, nor where a socket path would be too long', async () => {
    const { docker, root, create } = setup();
    await create('sbx-ses_1', 'gvisor');
    expect(docker.byName.get('sbx-ses_1')!.options.Labels).not.toHaveProperty(LABEL);
    expect(await readdir(root).catch(() => [])).toEqual([]);

    const long = setup(join(tmpdir(), 'x'.repeat(80)));
    expect(long.containers.usable).toBe(false);
    await long.create('sbx-ses_2');
    expect(long.docker.byName.get('sbx-ses_2')!.options.HostConfig?.Binds).toEqual([
      '/ws:/workspace',
    ]);
  });

  it('removes the directory of a container that failed to start, and with its container', async () => {
    const { docker, root, containers, create, linkOf } = setup();
    docker.failCreate = dockerError(500);
    await expect(create('sbx-ses_1')).rejects.toThrow();
    expect(await readdir(root)).toEqual([]);

    await create('sbx-ses_2');
    const link = linkOf('sbx-ses_2');
    expect(await readdir(root)).toEqual([link]);
    expect(await containers.remove('sbx-ses_2')).toBe(true);
    expect(await readdir(root)).toEqual([]);
  });

  it('makes the directory again for a stopped container that lost it', async () => {
    const { root, containers, create, linkOf } = setup();
    await create('sbx-ses_1');
    await rm(join(root, linkOf('sbx-ses_1')), { recursive: true });
    await containers.start('sbx-ses_1');
    expect((await stat(join(root, linkOf('sbx-ses_1')))).isDirectory()).toBe(true);
  });

  it('collects the directories of no listed container, and nothing that is not a link', async () => {
    const { docker, root, containers, create, linkOf } = setup();
    await create('sbx-ses_1');
    await mkdir(join(root, '0123456789abcdef'));
    await mkdir(join(root, 'not-a-link'));
    const removed = await containers.collect(await docker.listByLabel('io.sandbox.node', 'n1'));
    expect(removed).toEqual(['0123456789abcdef']);
    expect((await readdir(root)).sort()).toEqual([linkOf('sbx-ses_1'), 'not-a-link'].sort());
  });

  it("leads a runner's launch into a link directory only from a label that is a link's name", () => {
    const { root, containers } = setup();
    expect(containers.linkDir('0123456789abcdef')).toBe(join(root, '0123456789abcdef'));
    for (const label of ['..', '../../etc', '0123456789abcdef/..', '0123456789ABCDEF', '']) {
      expect(containers.linkDir(label)).toBeUndefined();
    }
  });
});
