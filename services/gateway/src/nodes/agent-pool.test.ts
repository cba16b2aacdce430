import { Writable } from 'node:stream';
import * as grpc from '@grpc/grpc-js';
import { createLogger } from '@sandbox/logger';
// eslint-disable-next-line no-restricted-imports -- the fake agent below answers over the wire
import { loadAgentProto } from '@sandbox/proto';
import type { NodeState, NodeStore } from './node-store';
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

describe('AgentPool heartbeats', () => {
  /** An agent's gRPC server that answers GetNodeInfo while `answering`, then holds every call. */
  async function slowAgent(nodeId: string) {
    const state = { answering: true };
    const held: Array<() => void> = [];
    const server = new grpc.Server();
    server.addService(loadAgentProto().agent.v1.Agent.service, {
      GetNodeInfo: (_call: unknown, callback: grpc.sendUnaryData<unknown>) => {
        const answer = () => callback(null, { nodeId, version: 't', sandboxes: 0, pool: [] });
        if (state.answering) answer();
        else held.push(answer);
      },
    });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, bound) =>
        err ? reject(err) : resolve(bound),
      ),
    );
    return {
      address: `127.0.0.1:${port}`,
      state,
      stop: () => {
        for (const answer of held) answer();
        server.forceShutdown();
      },
    };
  }

  it('keeps a node whose connection is open but whose answers are late up; a closed port goes down', async () => {
    const busy = await slowAgent('busy');
    const entries: Entry[] = [
      { id: 'busy', address: busy.address, state: 'active' },
      { id: 'gone', address: '127.0.0.1:1', state: 'active' },
    ];
    const registry = heldRegistry(entries);
    const pool = new AgentPool(registry.store, { ...settings, downAfterMs: 300 }, quiet);
    try {
      await pool.tick();
      expect(pool.live('busy')?.health).toBe('up');
      busy.state.answering = false;
      // Past downAfterMs, with every heartbeat timing out on the open connection.
      const until = Date.now() + 700;
      while (Date.now() < until) await pool.tick();
      expect(pool.live('busy')?.health).toBe('up');
      expect(pool.live('gone')?.health).toBe('down');
      expect(() => pool.forNode('busy')).not.toThrow();
    } finally {
      pool.close();
      busy.stop();
    }
  });
});

describe('AgentPool placements', () => {
  /** An agent whose heartbeat counts `sandboxes`, read `ageMs` before it answers. */
  async function countingAgent(nodeId: string, ageMs: number) {
    const server = new grpc.Server();
    server.addService(loadAgentProto().agent.v1.Agent.service, {
      GetNodeInfo: (_call: unknown, callback: grpc.sendUnaryData<unknown>) =>
        callback(null, {
          nodeId,
          version: 't',
          sandboxes: 0,
          sandboxesAgeMs: ageMs,
          maxSandboxes: 2,
          memoryTotalBytes: 4 * 1024 ** 3,
          memoryAvailableBytes: 2 * 1024 ** 3,
          memoryReserveBytes: 0,
          cpus: 2,
          pool: [],
        }),
    });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, bound) =>
        err ? reject(err) : resolve(bound),
      ),
    );
    return { address: `127.0.0.1:${port}`, stop: () => server.forceShutdown() };
  }

  it('keeps as pending the placements a stale count cannot show yet', async () => {
    // The node counted 10 s before it answered (a busy dockerd): it shows none of the two
    // sessions placed 3.5 s ago, and must still be seen full.
    const agent = await countingAgent('stale', 10_000);
    const registry = heldRegistry([{ id: 'stale', address: agent.address, state: 'active' }]);
    const pool = new AgentPool(registry.store, { ...settings, downAfterMs: 10_000 }, quiet);
    const shape = { memoryMb: 256, cpu: 0.25, diskMb: 256 };
    try {
      await pool.tick();
      await pool.placeNow(shape);
      await pool.placeNow(shape);
      await new Promise((resolve) => setTimeout(resolve, 3500));
      await pool.tick();
      await expect(pool.placeNow(shape)).rejects.toMatchObject({
        code: 'service_unavailable',
        message: 'Every execution node is full',
      });
    } finally {
      pool.close();
      agent.stop();
    }
  }, 15_000);
});
