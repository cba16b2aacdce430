import type { AgentClient } from '../agents/agent-client';
import type { NodeStatus } from '../agents/agent-messages';
import type { NodeState } from './node-store';

/** One node as this replica's pool holds it: its client, and what its heartbeats found. */
export interface Member {
  id: string;
  address: string;
  state: NodeState;
  client: AgentClient;
  status?: NodeStatus;
  lastOkAt?: number;
  /**
   * The last heartbeat's failure was a timeout while the connection stayed open: the node is
   * there but slow to answer (dockerd or its own event loop under load).
   */
  slow: boolean;
  /** A heartbeat has come back, answered or not. */
  checked: boolean;
  /** When the heartbeat whose answer is `status` was sent. */
  statusAskedAt: number;
  /** When this replica placed sessions on it (those after `statusAskedAt` are pending). */
  placements: number[];
  lastRecordedAt: number;
  failure?: string;
  /** A request's probe of a node seen down, under way (requests meanwhile share it). */
  probing?: Promise<void>;
}

/** A node just read from the registry, not yet asked for its status. */
export function newMember(
  node: { id: string; address: string; state: NodeState },
  client: AgentClient,
): Member {
  return {
    id: node.id,
    address: node.address,
    state: node.state,
    client,
    checked: false,
    slow: false,
    statusAskedAt: 0,
    placements: [],
    lastRecordedAt: 0,
  };
}
