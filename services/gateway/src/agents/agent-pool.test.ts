import { Writable } from 'node:stream';
import { createLogger } from '@sandbox/logger';
import type { NodeState, NodeStore } from '../nodes/node-store';
import { AgentPool } from './agent-pool';

type Entry = { id: string; address: string; state: NodeState };

/** A registry whose reads can be held, to find a round in flight. */
function heldRegistry(entries: Entry[]) {
  let release: () => void = () => undefined;
  let held: Promise<void> | undefined;
  const store = {
    async registry(): Promise<Entry[]> {
      const snapshot = entries.map((entry) => ({ ...entry }));
      if (held !== undefined) await held;
      return snapshot;
    },
  } as unknown as NodeStore;
  return {
    store,
    hold(): void {
      held = new Promise((resolve) => (release = resolve));
    },
    release(): void {
      held = undefined;
      release();
    },
  };
}

const quiet = createLogger({
  name: 'test',
  destination: new Writable({ write: (_c, _e, d) => d() }),
});
const settings = {
  token: undefined,
  callTimeoutMs: 500,
  fileTimeoutMs: 500,
  heartbeatMs: 60_000,
  downAfterMs: 1000,
};

describe('AgentPool.tick', () => {
  it('answers with a round that began after the call, even while one is in flight', async () => {
    const entries: Entry[] = [];
    const registry = heldRegistry(entries);
    const pool = new AgentPool(registry.store, settings, quiet);
    try {
      registry.hold();
      const inFlight = pool.tick();
      // Added while the round in flight has already read the registry.
      await new Promise((resolve) => setImmediate(resolve));
      entries.push({ id: 'late', address: '127.0.0.1:1', state: 'active' });
      const fresh = pool.tick();
      const sharedFresh = pool.tick();
      registry.release();
      await inFlight;
      expect(pool.live('late')).toBeUndefined();
      await Promise.all([fresh, sharedFresh]);
      // Nothing listens at port 1 of loopback: the fresh round saw the node and found it down.
      expect(pool.live('late')?.health).toBe('down');
    } finally {
      pool.close();
    }
  });

  it('runs no round once closed, even one queued before', async () => {
    const entries: Entry[] = [{ id: 'gone', address: '127.0.0.1:1', state: 'active' }];
    const registry = heldRegistry(entries);
    let reads = 0;
    const counting = {
      registry: () => {
        reads += 1;
        return registry.store.registry();
      },
    } as unknown as NodeStore;
    const pool = new AgentPool(counting, settings, quiet);
    registry.hold();
    const inFlight = pool.tick();
    await new Promise((resolve) => setImmediate(resolve));
    const queued = pool.tick();
    pool.close();
    registry.release();
    await Promise.all([inFlight, queued, pool.tick()]);
    expect(reads).toBe(1);
  });
});
