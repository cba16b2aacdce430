// A bench gateway's stores: what ./scripts/up gives it unless BENCH_STORES says otherwise
// (`pnpm test:bench`).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { benchGatewayEnv, pgliteDir, storesOf } from './stack-env.mjs';

const node = (stores) => ({ nodeId: 'bench-1', token: 't', ...stores });
const options = { drivenLifecycle: false, gatewayEnv: {} };

test('by default the stores are embedded, as ./scripts/up runs the gateway', () => {
  assert.equal(storesOf(undefined), 'embedded');
  assert.equal(storesOf('external'), 'external');
  assert.throws(() => storesOf('redis'), /BENCH_STORES is embedded or external/);
});

test('an embedded gateway gets a PGlite directory of its node, and no PostgreSQL or Redis', () => {
  const env = benchGatewayEnv(node({}), '127.0.0.1:1', options);
  assert.equal(env.PGLITE_DATA_DIR, pgliteDir('bench-1'));
  assert.ok(!('DATABASE_URL' in env), 'no DATABASE_URL');
  assert.ok(!('REDIS_URL' in env), 'no REDIS_URL');
});

test('an external gateway gets the bench database and Redis, and no PGlite directory', () => {
  const stores = { databaseUrl: 'postgres://db/x', redisUrl: 'redis://r:6379' };
  const env = benchGatewayEnv(node(stores), '127.0.0.1:1', options);
  assert.equal(env.DATABASE_URL, stores.databaseUrl);
  assert.equal(env.REDIS_URL, stores.redisUrl);
  assert.ok(!('PGLITE_DATA_DIR' in env), 'no PGLITE_DATA_DIR');
});
