import type { AgentNode } from '@sandbox/config';
import { AppError } from '@sandbox/errors';
import { AgentClient } from './agent-client';

/** The known agent nodes, by id. Placement picks one for a new session. */
export class AgentPool {
  private readonly clients: Map<string, AgentClient>;
  private next = 0;

  constructor(
    nodes: readonly AgentNode[],
    token: string | undefined,
    timeouts: { callTimeoutMs: number; fileTimeoutMs: number },
  ) {
    this.clients = new Map(
      nodes.map((node) => [
        node.id,
        new AgentClient({ nodeId: node.id, address: node.address, token, ...timeouts }),
      ]),
    );
  }

  /** The client of the node that holds a session. */
  forNode(nodeId: string): AgentClient {
    const client = this.clients.get(nodeId);
    if (client === undefined) {
      throw new AppError('service_unavailable', 'The node of this session is not available', {
        retryAfter: 30,
      });
    }
    return client;
  }

  /** A node for a new session (round-robin until nodes report capacity). */
  place(): AgentClient {
    const all = [...this.clients.values()];
    const client = all[this.next % all.length];
    this.next += 1;
    if (client === undefined) {
      throw new AppError('service_unavailable', 'No execution node is configured', {
        retryAfter: 30,
      });
    }
    return client;
  }

  close(): void {
    for (const client of this.clients.values()) client.close();
  }
}
