import type { SessionUse } from '../session-use';

/**
 * What a pause or a deep sleep asks before it freezes a session: whether the node served a
 * request of it in the last `unusedForMs` (the gateway's idle or deep-sleep delay) or serves
 * one now. The gateway decided from its own activity record, which a request in flight, or
 * one that overtook the decision, has not reached yet.
 */
export interface TransitionGuard {
  use: SessionUse;
  unusedForMs: number;
}

export function inUse(guard: TransitionGuard | undefined, sessionId: string): boolean {
  return guard !== undefined && guard.use.usedWithin(sessionId, guard.unusedForMs);
}
