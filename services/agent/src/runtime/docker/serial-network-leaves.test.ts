import { createLogger } from '@sandbox/logger';
import { FakeContainers } from '../lifecycle/fake-containers';
import { testConfig } from '../lifecycle/test-fixtures';
import { hasLeaveDeadlock, SerialNetworkLeaves } from './serial-network-leaves';

const logger = createLogger({ name: 'test', level: 'silent' });
const NETWORK = testConfig.sandboxNetwork;
const tick = () => new Promise((resolve) => setImmediate(resolve));

/** A promise with its resolver, to hold a fake Docker call open. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/**
 * Fake containers whose disconnects and removals wait until the test lets them finish, and
 * that count how many of each run at once (what Docker would see).
 */
function slowFakes() {
  const journal: string[] = [];
  const inner = new FakeContainers(journal);
  const held = { leaves: [] as Array<() => void>, removes: [] as Array<() => void> };
  const now = { leaves: new Map<string, number>(), all: 0, removes: 0 };
  /** The most at once: leaves of one network, leaves of any, removals. */
  const most = { leaves: 0, all: 0, removes: 0 };
  const disconnect = inner.disconnect.bind(inner);
  inner.disconnect = async (container, network) => {
    const count = (now.leaves.get(network) ?? 0) + 1;
    now.leaves.set(network, count);
    most.leaves = Math.max(most.leaves, count);
    now.all += 1;
    most.all = Math.max(most.all, now.all);
    const { promise, open } = gate();
    held.leaves.push(open);
    await promise;
    now.leaves.set(network, (now.leaves.get(network) ?? 1) - 1);
    now.all -= 1;
    return disconnect(container, network);
  };
  const remove = inner.remove.bind(inner);
  inner.remove = async (container) => {
    now.removes += 1;
    most.removes = Math.max(most.removes, now.removes);
    const { promise, open } = gate();
    held.removes.push(open);
    await promise;
    now.removes -= 1;
    return remove(container);
  };
  /** Lets the calls of a kind waiting now finish, then lets the next ones start. */
  const release = async (kind: 'leaves' | 'removes') => {
    for (const open of held[kind].splice(0)) open();
    await tick();
    await tick();
  };
  return { inner, journal, now, most, release };
}

describe('SerialNetworkLeaves', () => {
  it('takes running containers off a network one at a time, and removes them together', async () => {
    const { inner, journal, now, most, release } = slowFakes();
    const sessions = ['a', 'b', 'c', 'd'];
    for (const session of sessions) inner.put(session, 'running');
    const leaves = new SerialNetworkLeaves(inner, logger);

    const removals = Promise.all(sessions.map((s) => leaves.remove(`sbx-${s}`)));
    // Only leaves finish: each removal waits once it has begun, and the next leave goes on.
    while (now.removes < sessions.length) await release('leaves');
    await release('removes');

    expect(await removals).toEqual([true, true, true, true]);
    expect(most.leaves).toBe(1);
    // The removals (the slow part) did not wait for each other.
    expect(most.removes).toBe(4);
    // Each container left before its removal.
    for (const s of sessions) {
      expect(journal.indexOf(`container.disconnect ${s} ${NETWORK}`)).toBeLessThan(
        journal.indexOf(`container.remove ${s}`),
      );
    }
  });

  it('lets leaves of different networks overlap', async () => {
    const { inner, most, release } = slowFakes();
    inner.put('a', 'running');
    inner.put('b', 'running');
    const leaves = new SerialNetworkLeaves(inner, logger);

    const both = Promise.all([
      leaves.disconnect('sbx-a', NETWORK),
      leaves.disconnect('sbx-b', 'other'),
    ]);
    await tick();
    await release('leaves');

    expect(await both).toEqual([true, false]);
    expect(most.all).toBe(2);
    expect(most.leaves).toBe(1);
  });

  it('removes a container that does not run without a leave', async () => {
    const journal: string[] = [];
    const inner = new FakeContainers(journal);
    inner.put('a', 'exited');
    const leaves = new SerialNetworkLeaves(inner, logger);

    expect(await leaves.remove('sbx-a')).toBe(true);
    expect(journal).toEqual(['container.remove a']);
  });

  it('still removes a container whose leave fails', async () => {
    const journal: string[] = [];
    const inner = new FakeContainers(journal);
    inner.put('a', 'paused');
    inner.disconnect = () => Promise.reject(new Error('engine said no'));
    const leaves = new SerialNetworkLeaves(inner, logger);

    expect(await leaves.remove('sbx-a')).toBe(true);
    expect(journal).toEqual(['container.remove a']);
    expect(await inner.find('sbx-a')).toBeUndefined();
  });

  it('answers false for a container that is gone', async () => {
    const leaves = new SerialNetworkLeaves(new FakeContainers([]), logger);
    expect(await leaves.remove('sbx-none')).toBe(false);
  });
});

describe('hasLeaveDeadlock', () => {
  it.each([
    ['20.10.24+dfsg1', true],
    ['20.10.26', true],
    ['19.03.15', true],
    ['20.10.27', false],
    ['23.0.0', false],
    ['v28.1.1', false],
    ['', true],
    ['dev', true],
  ])('%s: %s', (version, has) => {
    expect(hasLeaveDeadlock(version)).toBe(has);
  });
});

describe('SerialNetworkLeaves on an engine with the fix', () => {
  it('removes running containers without a leave first, and asks the version once', async () => {
    const journal: string[] = [];
    const inner = new FakeContainers(journal);
    inner.put('a', 'running');
    inner.put('b', 'running');
    let asked = 0;
    const leaves = new SerialNetworkLeaves(inner, logger, () => {
      asked += 1;
      return Promise.resolve('24.0.7');
    });

    expect(await Promise.all([leaves.remove('sbx-a'), leaves.remove('sbx-b')])).toEqual([
      true,
      true,
    ]);
    expect(journal).toEqual(['container.remove a', 'container.remove b']);
    expect(asked).toBe(1);
  });

  it('leaves first when the engine does not say its version', async () => {
    const journal: string[] = [];
    const inner = new FakeContainers(journal);
    inner.put('a', 'running');
    const leaves = new SerialNetworkLeaves(inner, logger, () => Promise.reject(new Error('no')));

    expect(await leaves.remove('sbx-a')).toBe(true);
    expect(journal).toEqual([`container.disconnect a ${NETWORK}`, 'container.remove a']);
  });
});
