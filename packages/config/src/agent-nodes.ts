import { AppError } from '@sandbox/errors';
import { commaList } from './env-schema';

export interface AgentNode {
  readonly id: string;
  readonly address: string;
}

/** A node's id: lowercase letters, digits and dashes (a DNS label). */
export const NODE_ID = /^[a-z0-9][a-z0-9-]{0,62}$/;
/** An agent's gRPC address: `host:port` or `unix:/path`. */
export const AGENT_ADDRESS = /^[A-Za-z0-9.-]+:\d{1,5}$|^unix:\/.+$/;

/**
 * Parses `AGENT_NODES`: comma-separated `id=host:port` entries (e.g. `node-1=127.0.0.1:50051`);
 * empty: none (every node joins through the registry).
 */
export function parseAgentNodes(value: string): readonly AgentNode[] {
  const nodes = commaList(value).map((entry) => {
    const [id, address, ...rest] = entry.split('=');
    if (id === undefined || address === undefined || rest.length > 0) {
      throw new AppError('invalid_request', `AGENT_NODES entry "${entry}" is not id=host:port`);
    }
    if (!NODE_ID.test(id)) throw new AppError('invalid_request', `Bad agent node id "${id}"`);
    if (!AGENT_ADDRESS.test(address)) {
      throw new AppError('invalid_request', `Bad agent address "${address}"`);
    }
    return Object.freeze({ id, address });
  });
  if (new Set(nodes.map((n) => n.id)).size !== nodes.length) {
    throw new AppError('invalid_request', 'AGENT_NODES has a duplicate node id');
  }
  return Object.freeze(nodes);
}
