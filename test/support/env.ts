/**
 * Where the integration tests find the real Postgres, Redis and Docker engine. `./scripts/test`
 * starts them and sets these; a missing one fails the tests instead of skipping them.
 */
export function requiredEnv(name: 'TEST_DATABASE_URL' | 'TEST_REDIS_URL'): string {
  const value = process.env[name];
  if (value === undefined || value === '') {
    throw new Error(`${name} is not set: run the integration tests through ./scripts/test`);
  }
  return value;
}

export const SANDBOX_IMAGE = process.env.SANDBOX_IMAGE ?? 'sandbox-runtime:latest';
