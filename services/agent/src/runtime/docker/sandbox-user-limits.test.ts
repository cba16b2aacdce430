import { createLogger } from '@sandbox/logger';
import { FakeContainers } from '../lifecycle/fake-containers';
import { SandboxUserLimits } from './sandbox-user-limits';

function limited(remapped: boolean, fail?: Error) {
  const inner = new FakeContainers([]);
  const limitedPids: number[] = [];
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({
    name: 'test',
    destination: { write: (line: string) => void lines.push(JSON.parse(line) as never) },
  });
  const containers = new SandboxUserLimits(
    inner,
    () => remapped,
    logger,
    (pid) => {
      limitedPids.push(pid);
      return fail === undefined ? Promise.resolve() : Promise.reject(fail);
    },
  );
  return { inner, containers, limitedPids, lines };
}

describe('SandboxUserLimits', () => {
  it('limits the user namespace of each container it starts, under remapping', async () => {
    const { inner, containers, limitedPids } = limited(true);
    const id = await containers.createAndStart({ name: 'sbx-ses_a' });
    expect(limitedPids).toEqual([4242]);
    inner.byName.get('sbx-ses_a')!.state.running = false;
    await containers.start(id);
    expect(limitedPids).toEqual([4242, 4242]); // a start is a new namespace
  });

  it('leaves containers alone without remapping, or on a kernel of their own', async () => {
    const plain = limited(false);
    await plain.containers.createAndStart({ name: 'sbx-ses_a' });
    expect(plain.limitedPids).toEqual([]);
    const gvisor = limited(true);
    const state = gvisor.inner.put('ses_b', 'exited');
    state.ownKernel = true;
    await gvisor.containers.start(state.id);
    expect(gvisor.limitedPids).toEqual([]);
  });

  it('still hands out a container whose namespace could not be limited, and says so', async () => {
    const { containers, lines } = limited(true, new Error('nsenter: not found'));
    await expect(containers.createAndStart({ name: 'sbx-ses_a' })).resolves.toMatch(/^ctr-/);
    expect(lines).toContainEqual(expect.objectContaining({ level: 50 }));
  });
});
