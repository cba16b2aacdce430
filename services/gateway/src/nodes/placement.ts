import type { NodeStatus, PoolStock } from '../agents/agent-messages';

/** The size of sandbox a session asks for. */
export interface Shape {
  memoryMb: number;
  cpu: number;
  diskMb: number;
}

/** A node placement may choose: healthy, taking sessions, with what it said last. */
export interface Candidate {
  nodeId: string;
  status: NodeStatus;
  /** Sessions this replica placed on it since its last heartbeat (not in `status` yet). */
  pending: number;
}

/** A workspace saved there can wake on any node that names the same store. */
export function isSharedStore(store: string | null | undefined): boolean {
  return store?.startsWith('s3://') === true;
}

const sameShape = (stock: PoolStock, shape: Shape): boolean =>
  stock.memoryMb === shape.memoryMb && stock.cpu === shape.cpu && stock.diskMb === shape.diskMb;

/** Whether the node can take one more sandbox: under its count, above its memory reserve. */
export function canTake({ status, pending }: Candidate): boolean {
  return (
    status.sandboxes + pending < status.maxSandboxes &&
    status.memoryAvailableBytes > status.memoryReserveBytes
  );
}

/**
 * How loaded a node is, lower is better: its share of used sandbox slots, memory and CPU,
 * less a bonus when a warm sandbox of the shape is ready there (a create from the pool is
 * ~10× faster than a cold one).
 */
export function loadScore({ status, pending }: Candidate, shape: Shape): number {
  const slots = (status.sandboxes + pending) / Math.max(1, status.maxSandboxes);
  const memory = 1 - status.memoryAvailableBytes / Math.max(1, status.memoryTotalBytes);
  const cpu = Math.min(1, status.loadAverage / Math.max(1, status.cpus));
  const ready = status.pool
    .filter((stock) => sameShape(stock, shape))
    .reduce((sum, stock) => sum + stock.ready, 0);
  const warm = ready > pending ? 0.1 : 0;
  return 0.5 * slots + 0.3 * memory + 0.2 * cpu - warm;
}

/**
 * The node for a new sandbox of `shape`: the least loaded of those that can take it (ties
 * broken at random, so that replicas seeing the same loads do not all pick the same node);
 * undefined when none can.
 */
export function pickNode<C extends Candidate>(
  candidates: readonly C[],
  shape: Shape,
  random: () => number = Math.random,
): C | undefined {
  const able = candidates.filter(canTake);
  let best: C[] = [];
  let bestScore = Infinity;
  for (const candidate of able) {
    const score = loadScore(candidate, shape);
    if (score < bestScore - 1e-9) {
      best = [candidate];
      bestScore = score;
    } else if (Math.abs(score - bestScore) <= 1e-9) {
      best.push(candidate);
    }
  }
  return best[Math.floor(random() * best.length)];
}
