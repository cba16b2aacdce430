export type NodeHealth = 'up' | 'down' | 'unknown';

/**
 * How many times `downAfterMs` a node whose connection stays open may go without answering
 * before it is down: a burst of creates must not take the only node out of service (issue
 * 39), while an agent that hangs with its port open is still found out.
 */
export const BUSY_GRACE = 6;

/** What a node's health is judged on. */
export interface HeartbeatRecord {
  /** When a heartbeat was last answered. */
  lastOkAt?: number | undefined;
  /** Whether a heartbeat has come back, answered or not. */
  checked: boolean;
  /** Whether the last failure was a timeout on an open connection. */
  slow: boolean;
}

/**
 * up: answered within `downAfterMs`, or within BUSY_GRACE times that while its connection
 * stays open and only its answers are late; down: otherwise, once asked; unknown: not yet.
 */
export function nodeHealth(record: HeartbeatRecord, now: number, downAfterMs: number): NodeHealth {
  const { lastOkAt, checked, slow } = record;
  const silentFor = lastOkAt === undefined ? Infinity : now - lastOkAt;
  if (silentFor <= downAfterMs) return 'up';
  if (slow && silentFor <= downAfterMs * BUSY_GRACE) return 'up';
  return checked ? 'down' : 'unknown';
}
