export { createApp } from './app';
export { startGateway } from './create-gateway';
export type { GatewayOptions, RunningGateway } from './create-gateway';
export { AccountStore } from './accounts/account-store';
export { createDatabase } from './db/database';
export type { Database } from './db/database';
export { startEmbeddedPostgres } from './db/embedded-postgres';
export { migrate } from './db/migrate';
export { RedisRateLimiter } from './limits/redis-rate-limiter';
