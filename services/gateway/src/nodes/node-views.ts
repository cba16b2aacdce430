import type { AgentPool } from './agent-pool';
import type { NodeRecord, NodeStore } from './node-store';
import { isSharedStore } from './placement';

/** A node as the admin API shows it: the registry's record and this replica's heartbeat. */
export interface NodeView {
  nodeId: string;
  address: string;
  state: NodeRecord['state'];
  source: NodeRecord['source'];
  /** up: its heartbeat answers; down: it has not for NODE_DOWN_AFTER_MS; unknown: not asked yet. */
  health: 'up' | 'down' | 'unknown';
  version: string | null;
  lastSeenAt: string | null;
  sessions: number;
  /** Sessions a drain must still move off the node. */
  unmoved: number;
  capacity: { maxSandboxes: number; memoryTotalBytes: number; cpus: number } | null;
  load: {
    sandboxes: number;
    memoryAvailableBytes: number;
    loadAverage: number;
    pool: Array<{ memoryMb: number; cpu: number; diskMb: number; size: number; ready: number }>;
  } | null;
  blobStore: string | null;
  /** Its sessions can wake on other nodes (a shared blob store): it can be drained. */
  drainable: boolean;
}

/** The fleet as the admin API sees it: the registry joined with this replica's heartbeats. */
export class NodeViews {
  constructor(
    readonly store: NodeStore,
    readonly agents: AgentPool,
    /** Ends the sessions of a node lost for good (the session store); their ids. */
    readonly sessions: { forgetLostNode(nodeId: string): Promise<string[]> },
  ) {}

  view(record: NodeRecord): NodeView {
    const live = this.agents.live(record.id);
    const status = live?.status ?? record.status ?? undefined;
    const lastSeen = live?.lastHeartbeatAt ?? record.lastSeenAt ?? undefined;
    return {
      nodeId: record.id,
      address: record.address,
      state: record.state,
      source: record.source,
      health: live?.health ?? 'unknown',
      version: status?.version ?? record.version,
      lastSeenAt: lastSeen?.toISOString() ?? null,
      sessions: record.sessions,
      unmoved: record.unmoved,
      capacity:
        status === undefined
          ? null
          : {
              maxSandboxes: status.maxSandboxes,
              memoryTotalBytes: status.memoryTotalBytes,
              cpus: status.cpus,
            },
      load:
        status === undefined
          ? null
          : {
              sandboxes: status.sandboxes,
              memoryAvailableBytes: status.memoryAvailableBytes,
              loadAverage: status.loadAverage,
              pool: status.pool,
            },
      blobStore: status?.blobStore ?? null,
      drainable: isSharedStore(status?.blobStore),
    };
  }

  async list(): Promise<NodeView[]> {
    return (await this.store.list()).map((record) => this.view(record));
  }

  async get(nodeId: string): Promise<NodeView> {
    return this.view(await this.store.get(nodeId));
  }
}
