import type { NodeStatus } from '../agents/agent-messages';
import { canTake, isSharedStore, loadScore, pickNode, type Candidate } from './placement';

const GB = 1024 ** 3;
const shape = { memoryMb: 1024, cpu: 0.25, diskMb: 1024 };

function status(overrides: Partial<NodeStatus> = {}): NodeStatus {
  return {
    version: '0.1.0',
    previewAddress: '127.0.0.1:1',
    sandboxes: 0,
    sandboxesAgeMs: 0,
    maxSandboxes: 100,
    memoryTotalBytes: 16 * GB,
    memoryAvailableBytes: 12 * GB,
    memoryReserveBytes: 0.5 * GB,
    cpus: 4,
    loadAverage: 0,
    pool: [],
    blobStore: 's3://minio:9000/bucket/prefix/',
    ...overrides,
  };
}

const node = (nodeId: string, overrides: Partial<NodeStatus> = {}, pending = 0): Candidate => ({
  nodeId,
  status: status(overrides),
  pending,
});

describe('pickNode', () => {
  it('picks the node with fewer sandboxes when all else is equal', () => {
    const picked = pickNode([node('a', { sandboxes: 6 }), node('b', { sandboxes: 2 })], shape);
    expect(picked?.nodeId).toBe('b');
  });

  it('counts what this replica placed since the last heartbeat', () => {
    const picked = pickNode([node('a', { sandboxes: 2 }), node('b', { sandboxes: 0 }, 3)], shape);
    expect(picked?.nodeId).toBe('a');
  });

  it('prefers the node with less memory in use, then the less busy CPU', () => {
    expect(pickNode([node('a', { memoryAvailableBytes: 4 * GB }), node('b')], shape)?.nodeId).toBe(
      'b',
    );
    expect(pickNode([node('a', { loadAverage: 3 }), node('b')], shape)?.nodeId).toBe('b');
  });

  it('prefers a node with a warm sandbox of the shape ready, unless this replica took it', () => {
    const warm = { pool: [{ size: 2, ready: 1, ...shape }] };
    expect(pickNode([node('a', { sandboxes: 3, ...warm }), node('b')], shape)?.nodeId).toBe('a');
    expect(pickNode([node('a', { sandboxes: 3, ...warm }, 1), node('b')], shape)?.nodeId).toBe('b');
    // A warm sandbox of another shape is no help.
    const other = { pool: [{ size: 2, ready: 2, memoryMb: 512, cpu: 0.25, diskMb: 1024 }] };
    expect(pickNode([node('a', { sandboxes: 3, ...other }), node('b')], shape)?.nodeId).toBe('b');
  });

  it('never picks a full node: at its sandbox count, or at its memory reserve', () => {
    const full = node('a', { sandboxes: 100 });
    const starved = node('b', { memoryAvailableBytes: 0.4 * GB });
    expect(canTake(full)).toBe(false);
    expect(canTake(starved)).toBe(false);
    expect(pickNode([full, starved, node('c', { sandboxes: 99 })], shape)?.nodeId).toBe('c');
    expect(pickNode([full, starved], shape)).toBeUndefined();
    expect(canTake(node('d', { sandboxes: 98 }, 2))).toBe(false);
  });

  it('breaks ties at random, so that replicas do not all pick the same node', () => {
    const nodes = [node('a'), node('b')];
    expect(pickNode(nodes, shape, () => 0)?.nodeId).toBe('a');
    expect(pickNode(nodes, shape, () => 0.99)?.nodeId).toBe('b');
  });

  it('is undefined with no candidate', () => {
    expect(pickNode([], shape)).toBeUndefined();
  });
});

it('scores a loaded node higher', () => {
  expect(loadScore(node('a', { sandboxes: 50 }), shape)).toBeGreaterThan(
    loadScore(node('b', { sandboxes: 10 }), shape),
  );
});

it('calls only S3 stores shared', () => {
  expect(isSharedStore('s3://minio:9000/bucket/p/')).toBe(true);
  expect(isSharedStore('local:node-a')).toBe(false);
  expect(isSharedStore('node:node-a')).toBe(false);
  expect(isSharedStore(null)).toBe(false);
});
