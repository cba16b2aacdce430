import { AppError } from '@sandbox/errors';
import type { Database } from '../db/database';
import { oneRow } from '../db/one-row';
import type { NodeStatus } from '../agents/agent-messages';

export type NodeState = 'active' | 'cordoned' | 'draining';
export type NodeSource = 'config' | 'operator' | 'agent';

/** A registered agent node, as the registry keeps it. */
export interface NodeRecord {
  id: string;
  address: string;
  state: NodeState;
  source: NodeSource;
  version: string | null;
  /** What a gateway saw at the node's last heartbeat (recorded every few heartbeats). */
  status: NodeStatus | null;
  lastSeenAt: Date | null;
  createdAt: Date;
  /** Live sessions it holds (any state but deleted or expired). */
  sessions: number;
  /** Of those, how many its drain must still move (all but confirmed sleepers in a shared store). */
  unmoved: number;
}

/** The columns named as the record names them, and the rest in Postgres' names. */
type NodeRow = Pick<NodeRecord, 'id' | 'address' | 'state' | 'source' | 'version' | 'status'> & {
  last_seen_at: Date | null;
  created_at: Date;
  sessions: string;
  unmoved: string;
};

const toRecord = (row: NodeRow): NodeRecord => ({
  id: row.id,
  address: row.address,
  state: row.state,
  source: row.source,
  version: row.version,
  status: row.status,
  lastSeenAt: row.last_seen_at,
  createdAt: row.created_at,
  sessions: Number(row.sessions),
  unmoved: Number(row.unmoved),
});

/** A session (`s`) that has to leave its node: all but a confirmed sleeper in a shared store. */
export const UNMOVED = `NOT (s.state = 'deep-sleep' AND s.sleep_confirmed_at IS NOT NULL
                             AND s.saved_in LIKE 's3://%')`;

const SELECT = `
  SELECT n.*,
         (SELECT count(*) FROM sessions s
           WHERE s.node_id = n.id AND s.deleted_at IS NULL AND s.expires_at > now()) AS sessions,
         (SELECT count(*) FROM sessions s
           WHERE s.node_id = n.id AND s.deleted_at IS NULL AND s.expires_at > now()
             AND ${UNMOVED}) AS unmoved
    FROM nodes n`;

export function nodeNotFound(nodeId: string): AppError {
  return new AppError('not_found', `No node "${nodeId}" is registered`);
}

/** The node registry in Postgres, shared by every gateway replica. */
export class NodeStore {
  constructor(private readonly db: Database) {}

  async list(): Promise<NodeRecord[]> {
    const { rows } = await this.db.query<NodeRow>(`${SELECT} ORDER BY n.id`);
    return rows.map(toRecord);
  }

  /** The registry alone (no counts): what each replica re-reads at every heartbeat. */
  async registry(): Promise<Array<{ id: string; address: string; state: NodeState }>> {
    const { rows } = await this.db.query<{ id: string; address: string; state: NodeState }>(
      'SELECT id, address, state FROM nodes',
    );
    return rows;
  }

  async get(nodeId: string): Promise<NodeRecord> {
    const row = await oneRow<NodeRow>(this.db, `${SELECT} WHERE n.id = $1`, [nodeId], () =>
      nodeNotFound(nodeId),
    );
    return toRecord(row);
  }

  /**
   * The gateway's AGENT_NODES: registered if new, their address set if the configuration's
   * changed (an operator's or an agent's entry keeps its source).
   */
  async registerConfigured(nodes: ReadonlyArray<{ id: string; address: string }>): Promise<void> {
    for (const node of nodes) {
      await this.db.query(
        `INSERT INTO nodes (id, address, source) VALUES ($1, $2, 'config')
         ON CONFLICT (id) DO UPDATE SET address = EXCLUDED.address, updated_at = now()
          WHERE nodes.address <> EXCLUDED.address`,
        [node.id, node.address],
      );
    }
  }

  /** An operator adds a node; 409 conflict when the id is taken. */
  async add(node: { id: string; address: string }): Promise<NodeRecord> {
    const { rowCount } = await this.db.query(
      `INSERT INTO nodes (id, address, source) VALUES ($1, $2, 'operator')
       ON CONFLICT (id) DO NOTHING`,
      [node.id, node.address],
    );
    if (rowCount === 0) {
      throw new AppError('conflict', `A node "${node.id}" is registered already`);
    }
    return this.get(node.id);
  }

  /** An agent announces itself: registered, or its address and version brought up to date. */
  async announce(node: { id: string; address: string; version: string }): Promise<NodeRecord> {
    await this.db.query(
      `INSERT INTO nodes (id, address, source, version) VALUES ($1, $2, 'agent', $3)
       ON CONFLICT (id) DO UPDATE SET address = EXCLUDED.address, version = EXCLUDED.version,
              updated_at = now()
        WHERE nodes.address <> EXCLUDED.address OR nodes.version IS DISTINCT FROM EXCLUDED.version`,
      [node.id, node.address, node.version],
    );
    return this.get(node.id);
  }

  async setState(nodeId: string, state: NodeState): Promise<NodeRecord> {
    const { rowCount } = await this.db.query(
      'UPDATE nodes SET state = $2, updated_at = now() WHERE id = $1',
      [nodeId, state],
    );
    if (rowCount === 0) throw nodeNotFound(nodeId);
    return this.get(nodeId);
  }

  /** What a heartbeat found. */
  async recordSeen(nodeId: string, status: NodeStatus): Promise<void> {
    await this.db.query(
      `UPDATE nodes SET status = $2, version = $3, last_seen_at = now() WHERE id = $1`,
      [nodeId, JSON.stringify(status), status.version],
    );
  }

  /**
   * Removes a node from the registry; 409 while it holds sessions that cannot wake elsewhere
   * (all but confirmed sleepers in a shared store): drain it first.
   */
  async remove(nodeId: string): Promise<void> {
    const { rowCount } = await this.db.query(
      `DELETE FROM nodes n WHERE n.id = $1 AND NOT EXISTS (
         SELECT 1 FROM sessions s
          WHERE s.node_id = n.id AND s.deleted_at IS NULL AND s.expires_at > now() AND ${UNMOVED})`,
      [nodeId],
    );
    if (rowCount !== 0) return;
    const node = await this.get(nodeId);
    throw new AppError(
      'conflict',
      `Node "${nodeId}" still holds ${node.unmoved} session(s) that cannot wake elsewhere: drain it first`,
      { details: { unmoved: node.unmoved } },
    );
  }
}
