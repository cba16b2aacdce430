import type { Logger } from '@sandbox/logger';
import type { IdempotencyStore } from '../idempotency/idempotency-store';
import type { SessionLifecycle } from './session-lifecycle';
import type { SessionService } from './session-service';
import type { SessionStore } from './session-store';

export interface SessionSweeperDeps {
  store: SessionStore;
  sessions: SessionService;
  idempotency: IdempotencyStore;
  /** Forgets terminals made more than a day ago (the terminal store); how many. */
  terminals: { purgeExpired(): Promise<number> };
  /** Removes the blobs of deleted snapshots (an account's deletion too); how many. */
  snapshots?: { purge(): Promise<number> };
  lifecycle: SessionLifecycle;
  logger: Logger;
  /** The longest between two sweeps (retries of failed removals and transitions). */
  intervalMs: number;
  /** Sweeps at the next deadline (expiry, idle, deep sleep) too, not only every interval. */
  atDeadlines: boolean;
}

/** Sessions stuck in `creating` longer than this were abandoned by a gateway that died. */
const STUCK_CREATING_AFTER_S = 120;
/** How long one replica may hold a session's removal before another may retry it. */
const DESTROY_LEASE_S = 60;
/**
 * The least between two sweeps: a deadline that a sweep could not act on (another replica
 * holds the row) is not retried in a busy loop.
 */
const MIN_GAP_MS = 100;

/**
 * Ends expired sessions, removes the sandboxes of ended ones, and moves sessions to idle and
 * deep sleep. Runs on every gateway replica; rows are claimed with SKIP LOCKED and leases, so
 * no two replicas do the same work.
 *
 * Timed by the deadlines themselves: after each sweep it asks Postgres how long until the
 * next one (index probes, no scan) and sleeps that long, at most `intervalMs`. Activity only
 * moves a deadline later; what can come sooner than planned is a session that becomes
 * active (created or woken: its idle deadline, and a new one's expiry), and the replica
 * where that happens says so (`dueBy`). Every replica keeps its own timer, so a transition
 * is on time while any replica is up.
 */
export class SessionSweeper {
  private timer: NodeJS.Timeout | undefined;
  /** When the timer fires (epoch ms); Infinity while a sweep runs or when stopped. */
  private plannedAt = Infinity;
  private running: Promise<void> | undefined;
  /** The soonest deadline told while a sweep ran (it may have read the deadlines before). */
  private toldDuringSweep = Infinity;
  private stopped = true;

  constructor(private readonly deps: SessionSweeperDeps) {}

  start(): void {
    this.stopped = false;
    this.plan(this.deps.atDeadlines ? 0 : this.deps.intervalMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** A session has a deadline at `at` (it was created or woken): sweep by then. */
  dueBy(at: Date): void {
    if (this.stopped || !this.deps.atDeadlines) return;
    if (this.running !== undefined) {
      this.toldDuringSweep = Math.min(this.toldDuringSweep, at.getTime());
    } else if (at.getTime() < this.plannedAt) {
      this.plan(at.getTime() - Date.now());
    }
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
      if (await this.deps.sessions.destroy(pending)) destroyed.push(pending.id);
    }
    await this.deps.idempotency.purgeExpired();
    await this.deps.terminals.purgeExpired();
    await this.deps.snapshots?.purge();
    const { idled, slept } = await this.deps.lifecycle.pass();
    return { expired, destroyed, idled, slept };
  }

  private plan(delayMs: number): void {
    clearTimeout(this.timer);
    const delay = Math.max(0, Math.min(delayMs, this.deps.intervalMs));
    this.plannedAt = Date.now() + delay;
    this.timer = setTimeout(() => void this.tick(), delay);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    this.plannedAt = Infinity;
    this.toldDuringSweep = Infinity;
    this.running = this.sweepAndPlan().finally(() => {
      this.running = undefined;
    });
    await this.running;
  }

  private async sweepAndPlan(): Promise<void> {
    let next = this.deps.intervalMs;
    try {
      await this.sweep();
      if (this.deps.atDeadlines) {
        next = (await this.deps.lifecycle.msUntilNextTransition()) ?? this.deps.intervalMs;
      }
    } catch (err) {
      this.deps.logger.error({ err }, 'session sweep failed');
    }
    next = Math.min(next, this.toldDuringSweep - Date.now());
    if (!this.stopped) this.plan(Math.max(next, MIN_GAP_MS));
  }
}
