import type { GatewayConfig } from '@sandbox/config';
import { AppError } from '@sandbox/errors';
import type { Logger } from '@sandbox/logger';
import type { AgentPool } from '../nodes/agent-pool';
import type { SessionRecord } from './session-record';
import type { SessionStore } from './session-store';

/** Sees how long each wake took (the metrics). */
export interface WakeObserver {
  observeWake(from: 'idle' | 'deep-sleep', seconds: number, moved: boolean): void;
}

/** The gateway's delays before a session's transitions (its configuration's). */
export type LifecycleSettings = Pick<GatewayConfig, 'idleAfterS' | 'deepSleepAfterS'>;

/** Longest pause between two activity records of a long request. */
const ACTIVITY_HEARTBEAT_MS = 30_000;
/** How long one replica may spend putting a session to deep sleep before another retries. */
const SLEEP_LEASE_S = 600;

/**
 * How long ago the node must have served the session's last request for a transition after
 * `delayS`: the delay less a second (half of it, for a short one). Some requests count as
 * activity from their start here, the node counts from their end: without the slack a
 * transition due at its deadline would be refused, and come one whole delay late.
 */
export function unusedForMs(delayS: number): number {
  const delayMs = delayS * 1000;
  return delayMs - Math.min(1000, delayMs / 2);
}

/**
 * Spec part 3: active → idle (the sandbox is paused) → deep sleep (its workspace is saved and
 * the sandbox removed), and back to active on any request that names the session. The state
 * is changed in Postgres first, so that a request arriving during a transition always wakes
 * the session; the node serializes a session's transitions and makes each one idempotent, so
 * a crash at any point converges on the next pass or request.
 */
export class SessionLifecycle {
  private readonly wokenListeners: Array<(session: SessionRecord) => void> = [];

  constructor(
    private readonly store: SessionStore,
    private readonly agents: AgentPool,
    private readonly settings: LifecycleSettings,
    private readonly logger: Logger,
    private readonly wakes?: WakeObserver,
  ) {}

  /**
   * Records activity on a session until the returned function is called, so that it does not
   * go idle under a long request (a run, a slow download): at least three times per idle
   * delay, at most every 30 s. At the end, `atEnd` records the last of it.
   */
  keepActiveWhile(sessionId: string, atEnd: () => void): () => void {
    const record = (): void => {
      this.store.keepActive(sessionId).catch(() => undefined);
    };
    const everyMs = Math.min(ACTIVITY_HEARTBEAT_MS, (this.settings.idleAfterS * 1000) / 3);
    const heartbeat = setInterval(record, Math.max(everyMs, 100));
    return () => {
      clearInterval(heartbeat);
      atEnd();
    };
  }

  /** `listener` sees each session this replica woke (active again, with a new idle deadline). */
  onWoken(listener: (session: SessionRecord) => void): void {
    this.wokenListeners.push(listener);
  }

  /**
   * Wakes an idle or sleeping session before a request uses it; the session as it is then (a
   * sleeper whose node is draining, down or gone wakes on another node naming its store).
   */
  async ensureAwake(session: SessionRecord): Promise<SessionRecord> {
    const started = Date.now();
    if (session.state === 'idle') {
      await this.agents.forNode(session.nodeId).resumeSandbox(session.id);
      await this.store.markAwake(session.id, 'idle');
      this.woken(session);
      this.wakes?.observeWake('idle', (Date.now() - started) / 1000, false);
    } else if (session.state === 'deep-sleep') {
      const { agent, movedFrom } = await this.agents.wakeTarget(session, {
        memoryMb: session.resourceLimits.memory,
        cpu: session.resourceLimits.cpu,
        diskMb: session.resourceLimits.disk,
      });
      if (movedFrom !== undefined) {
        if (!(await this.store.moveTo(session.id, movedFrom, agent.nodeId))) {
          throw new AppError('service_unavailable', 'The session is waking; try again', {
            retryAfter: 1,
          });
        }
        session = { ...session, nodeId: agent.nodeId };
        this.logger.info(
          { sessionId: session.id, from: movedFrom, to: agent.nodeId },
          'session moves',
        );
      }
      await agent.restoreSandbox({
        sessionId: session.id,
        accountId: session.accountId,
        limits: {
          memoryMb: session.resourceLimits.memory,
          cpu: session.resourceLimits.cpu,
          diskMb: session.resourceLimits.disk,
          pids: 0,
        },
        egress: session.egress,
      });
      await this.store.markAwake(session.id, 'deep-sleep');
      this.woken(session);
      this.logger.info(
        { sessionId: session.id, ms: Date.now() - started },
        'session woke from deep sleep',
      );
      this.wakes?.observeWake('deep-sleep', (Date.now() - started) / 1000, movedFrom !== undefined);
    }
    return session;
  }

  private woken(session: SessionRecord): void {
    for (const listener of this.wokenListeners) listener(session);
  }

  /** Milliseconds until the next session expires, goes idle or to deep sleep; null: never. */
  msUntilNextTransition(): Promise<number | null> {
    return this.store.msUntilNextTransition(
      this.settings.idleAfterS,
      this.settings.deepSleepAfterS,
    );
  }

  /**
   * One pass: pauses sessions idle long enough, puts to deep sleep those idle longer. The node
   * has the last word: it refuses while it serves a request of the session or served one
   * within the delay (a request this replica's activity record has not seen yet, or one that
   * overtook the state change); the session is then active again, its delay started anew.
   */
  async pass(): Promise<{ idled: string[]; slept: string[] }> {
    const slept: string[] = [];
    const { idleAfterS, deepSleepAfterS } = this.settings;
    for (const due of await this.store.markDeepSleepDue(deepSleepAfterS, SLEEP_LEASE_S)) {
      try {
        const saved = await this.agents
          .forNode(due.nodeId)
          .hibernateSandbox(due.id, { unusedForMs: unusedForMs(deepSleepAfterS) });
        if (saved.inUse) {
          await this.store.markAwake(due.id, 'deep-sleep');
          continue;
        }
        await this.store.confirmSleep(due.id, saved.filesCount, saved.savedIn);
        slept.push(due.id);
      } catch (err) {
        this.logger.warn({ err, sessionId: due.id }, 'deep sleep failed; will retry');
      }
    }
    // Pauses are cheap for a node and many may be due together: a batch goes at once (the
    // store hands out at most 20 per pass); deep sleeps above, each an archive, one by one.
    const due = await this.store.markIdleDue(idleAfterS);
    const paused = await Promise.all(
      due.map(async ({ id, nodeId }) => {
        try {
          const { paused: done } = await this.agents
            .forNode(nodeId)
            .pauseSandbox(id, unusedForMs(idleAfterS));
          if (done) return id;
          await this.store.markAwake(id, 'idle');
        } catch (err) {
          this.logger.warn({ err, sessionId: id }, 'pausing an idle session failed');
        }
        return undefined;
      }),
    );
    const idled = paused.filter((id): id is string => id !== undefined);
    return { idled, slept };
  }
}
