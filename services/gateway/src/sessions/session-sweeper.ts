import type { Logger } from '@sandbox/logger';
import { Periodic } from '@sandbox/contract';
import type { IdempotencyStore } from '../idempotency/idempotency-store';
import type { SessionLifecycle } from './session-lifecycle';
import type { SessionService } from './session-service';
import type { SessionStore } from './session-store';

export interface SessionSweeperDeps {
  store: SessionStore;
  sessions: SessionService;
  idempotency: IdempotencyStore;
  lifecycle: SessionLifecycle;
  logger: Logger;
  intervalMs: number;
}

/** Sessions stuck in `creating` longer than this were abandoned by a gateway that died. */
const STUCK_CREATING_AFTER_S = 120;
/** How long one replica may hold a session's removal before another may retry it. */
const DESTROY_LEASE_S = 60;

/**
 * Ends expired sessions and removes the sandboxes of ended ones. Runs on every gateway replica;
 * rows are claimed with SKIP LOCKED and leases, so no two replicas do the same work.
 */
export class SessionSweeper {
  private readonly periodic: Periodic;

  constructor(private readonly deps: SessionSweeperDeps) {
    this.periodic = new Periodic(
      () => this.sweep(),
      deps.intervalMs,
      deps.logger,
      'session sweep failed',
    );
  }

  start(): void {
    this.periodic.start();
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }

  /** One pass: expiry, removal of ended sandboxes, then idle and deep sleep. */
  async sweep(): Promise<{
    expired: string[];
    destroyed: string[];
    idled: string[];
    slept: string[];
  }> {
    const expired = await this.deps.store.expireDue(STUCK_CREATING_AFTER_S);
    for (const id of expired) this.deps.logger.info({ sessionId: id }, 'session expired');
    const destroyed: string[] = [];
    for (const pending of await this.deps.store.claimPendingDestroys(DESTROY_LEASE_S)) {
      if (await this.deps.sessions.destroy(pending.id, pending.nodeId)) destroyed.push(pending.id);
    }
    await this.deps.idempotency.purgeExpired();
    const { idled, slept } = await this.deps.lifecycle.pass();
    return { expired, destroyed, idled, slept };
  }
}
