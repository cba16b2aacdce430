import { randomUUID } from 'node:crypto';
import type { Redis, Result } from 'ioredis';
import { callingStorage } from '../db/storage-errors';
import { STAMP_PREFIX } from '../cache/invalidations';
import { sendSoon } from '../cache/redis-send';
import {
  decide,
  type GuardedDecision,
  type RateDecision,
  type RateLimiter,
  type StampGuard,
} from './rate-limiter';

/**
 * Sliding-window log in one sorted set per key, updated atomically by a Lua script that uses
 * Redis's own clock, so that any number of gateway replicas share one exact budget.
 * `consume(key, limit, window, member)` returns {allowed, count, oldestMs, newestMs, nowMs}.
 */
const CONSUME = `
local function consume(key, limit, window, member)
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  local count = redis.call('ZCARD', key)
  local allowed = 0
  if count < limit then
    redis.call('ZADD', key, now, member)
    count = count + 1
    allowed = 1
  end
  redis.call('PEXPIRE', key, window)
  local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2] or now
  local newest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')[2] or now
  return {allowed, count, tostring(oldest), tostring(newest), tostring(now)}
end
`;

const SLIDING_WINDOW_SCRIPT = `${CONSUME}
return consume(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3])
`;

/**
 * The same, counted only if the stamp KEYS[2] reads ARGV[5] (ARGV[4] = '1'), or is unset
 * (ARGV[4] = '0'). Returns the stamp first ({0} unset, {1, value} set), then the window's
 * reply when the request was counted.
 */
const GUARDED_WINDOW_SCRIPT = `${CONSUME}
local stamp = redis.call('GET', KEYS[2])
local read = stamp and {1, stamp} or {0}
local expected = ARGV[4] == '1' and ARGV[5] or false
if stamp ~= expected then return {read} end
return {read, consume(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3])}
`;

type ScriptReply = [number, number, string, string, string];
type GuardedReply = [[0] | [1, string], ScriptReply?];

declare module 'ioredis' {
  interface RedisCommander<Context> {
    slidingWindow(
      key: string,
      limit: number,
      windowMs: number,
      member: string,
    ): Result<ScriptReply, Context>;
    guardedWindow(
      key: string,
      stampKey: string,
      limit: number,
      windowMs: number,
      member: string,
      stampSet: '0' | '1',
      expected: string,
    ): Result<GuardedReply, Context>;
  }
}

function decision(reply: ScriptReply, limit: number, windowMs: number): RateDecision {
  const [allowed, count, oldest, newest, now] = reply;
  return decide(allowed === 1, limit, count, Number(oldest), Number(newest), Number(now), windowMs);
}

export class RedisRateLimiter implements RateLimiter {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'ratelimit:',
    private readonly stampPrefix = STAMP_PREFIX,
  ) {
    redis.defineCommand('slidingWindow', { numberOfKeys: 1, lua: SLIDING_WINDOW_SCRIPT });
    redis.defineCommand('guardedWindow', { numberOfKeys: 2, lua: GUARDED_WINDOW_SCRIPT });
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  /** Redis out of reach is 503 service_unavailable (storage-errors.ts). */
  async consume(key: string, limit: number, windowMs: number): Promise<RateDecision> {
    const reply = await callingStorage(() =>
      sendSoon(this.redis, () =>
        this.redis.slidingWindow(this.prefix + key, limit, windowMs, randomUUID()),
      ),
    );
    return decision(reply, limit, windowMs);
  }

  /** One script (see GUARDED_WINDOW_SCRIPT); Redis out of reach reads as an unknown stamp. */
  async consumeIfStamped(
    key: string,
    limit: number,
    windowMs: number,
    guard: StampGuard,
  ): Promise<GuardedDecision> {
    if (this.redis.status !== 'ready') return { stamp: undefined };
    try {
      const [read, window] = await sendSoon(this.redis, () =>
        this.redis.guardedWindow(
          this.prefix + key,
          this.stampPrefix + guard.key,
          limit,
          windowMs,
          randomUUID(),
          guard.expected === null ? '0' : '1',
          guard.expected ?? '',
        ),
      );
      const stamp = read[0] === 1 ? read[1] : null;
      return window === undefined
        ? { stamp }
        : { stamp, decision: decision(window, limit, windowMs) };
    } catch {
      return { stamp: undefined };
    }
  }

  async close(): Promise<void> {
    await this.redis.quit();
  }
}
