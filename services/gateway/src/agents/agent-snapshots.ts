import type { AgentClient as GrpcAgentClient, SnapshotResponse__Output } from '@sandbox/proto';
import type { UnaryCall } from './agent-channel';

/** A unary call with a deadline of its own; failures as AppErrors. */
export type SnapshotCall = <Res>(call: UnaryCall<Res>) => Promise<Res>;

/** What a node stored as a snapshot (ADR 44). */
export interface SnapshotTaken {
  bytes: number;
  filesCount: number;
  /** How long the source sandbox was frozen. */
  pausedMs: number;
  processesKept: boolean;
  /** The blob store holding it (as the node's heartbeat names its store). */
  storedIn: string;
}

/** One agent's snapshots: a session's workspace stored under a snapshot id, and removed. */
export class AgentSnapshots {
  constructor(
    private readonly client: GrpcAgentClient,
    private readonly call: SnapshotCall,
  ) {}

  async take(sessionId: string, snapshotId: string, processes: boolean): Promise<SnapshotTaken> {
    const taken = await this.call<SnapshotResponse__Output>((md, options, cb) =>
      this.client.snapshotSandbox({ sessionId, snapshotId, processes }, md, options, cb),
    );
    return {
      bytes: Number(taken.bytes),
      filesCount: taken.filesCount,
      pausedMs: taken.pausedMs,
      processesKept: taken.processesKept,
      storedIn: taken.storedIn,
    };
  }

  /** Removes a snapshot's blob (idempotent). */
  async remove(snapshotId: string): Promise<void> {
    await this.call((md, options, cb) =>
      this.client.deleteSnapshot({ snapshotId }, md, options, cb),
    );
  }
}
