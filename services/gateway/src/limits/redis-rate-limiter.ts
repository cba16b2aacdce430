import { randomUUID } from 'node:crypto';
import type { Redis, Result } from 'ioredis';
import { callingStorage } from '../db/storage-errors';
import { decide, type RateDecision, type RateLimiter } from './rate-limiter';

/**
 * Sliding-window log in one sorted set per key, updated atomically by a Lua script that uses
 * Redis's own clock, so that any number of gateway replicas share one exact budget.
 * Returns {allowed, count, oldestMs, newestMs, nowMs}.
 */
const SLIDING_WINDOW_SCRIPT = `
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local member = ARGV[3]
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
`;

type ScriptReply = [number, number, string, string, string];

declare module 'ioredis' {
  interface RedisCommander<Context> {
    slidingWindow(
      key: string,
      limit: number,
      windowMs: number,
      member: string,
    ): Result<ScriptReply, Context>;
  }
}

export class RedisRateLimiter implements RateLimiter {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'ratelimit:',
  ) {
    redis.defineCommand('slidingWindow', { numberOfKeys: 1, lua: SLIDING_WINDOW_SCRIPT });
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  /** Redis out of reach is 503 service_unavailable (storage-errors.ts). */
  async consume(key: string, limit: number, windowMs: number): Promise<RateDecision> {
    const [allowed, count, oldest, newest, now] = await callingStorage(() =>
      this.redis.slidingWindow(this.prefix + key, limit, windowMs, randomUUID()),
    );
    return decide(
      allowed === 1,
      limit,
      count,
      Number(oldest),
      Number(newest),
      Number(now),
      windowMs,
    );
  }

  async close(): Promise<void> {
    await this.redis.quit();
  }
}
