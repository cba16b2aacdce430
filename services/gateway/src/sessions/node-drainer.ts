import type { Logger } from '@sandbox/logger';
import type { AgentPool } from '../nodes/agent-pool';
import type { SessionStore } from './session-store';

/** How long one replica may spend moving a session off a draining node before another retries. */
const EVACUATION_LEASE_S = 600;
/** A failed move is tried again this much later. */
const RETRY_S = 5;

/**
 * Drains: each session of a draining node that answers goes to deep sleep with `evacuate`
 * (its runs end, its workspace is archived to the shared blob store, its sandbox removed),
 * a few at a time per pass. Its next request or preview visit wakes it on another node
 * (`AgentPool.wakeTarget`). Replicas share the work through leases on the sessions.
 */
export class NodeDrainer {
  constructor(
    private readonly store: SessionStore,
    private readonly agents: AgentPool,
    private readonly logger: Logger,
  ) {}

  /** One pass over every draining node; the sessions moved. */
  async pass(): Promise<string[]> {
    const moved: string[] = [];
    for (const { nodeId, agent } of this.agents.draining()) {
      for (const sessionId of await this.store.claimEvacuations(nodeId, EVACUATION_LEASE_S)) {
        try {
          const saved = await agent.hibernateSandbox(sessionId, { evacuate: true });
          await this.store.confirmSleep(sessionId, saved.filesCount, saved.savedIn);
          moved.push(sessionId);
          this.logger.info(
            { sessionId, nodeId, savedIn: saved.savedIn },
            'session moved off a draining node',
          );
        } catch (err) {
          this.logger.warn(
            { err, sessionId, nodeId },
            'moving a session off its node failed; will retry',
          );
          await this.store.retryEvacuationIn(sessionId, RETRY_S);
        }
      }
    }
    return moved;
  }
}
