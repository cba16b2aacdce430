import { AppError } from '@sandbox/errors';

const NETWORK_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
/** SQLSTATE classes of a database out of reach: connection exceptions, shutting down. */
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[1-3])$/;
const CONNECTION_LOST =
  /^(Connection is closed|Connection terminated|timeout exceeded when trying to connect)/i;

/**
 * Postgres or Redis out of reach (refused, reset, shutting down, retries exhausted): a
 * temporary fault, 503 service_unavailable with Retry-After, not a server bug.
 */
export function storageUnavailable(err: unknown): AppError | undefined {
  // Not `instanceof Error`: Node's own socket errors may come from another realm (jest's).
  if (typeof err !== 'object' || err === null || err instanceof AppError) return undefined;
  const { code, name, message } = err as { code?: unknown; name?: unknown; message?: unknown };
  const unavailable =
    (typeof code === 'string' && (NETWORK_ERRORS.has(code) || UNAVAILABLE_SQLSTATE.test(code))) ||
    name === 'MaxRetriesPerRequestError' ||
    (typeof message === 'string' && CONNECTION_LOST.test(message));
  if (!unavailable) return undefined;
  return new AppError('service_unavailable', 'The service is temporarily unavailable; retry', {
    retryAfter: 1,
    cause: err,
  });
}

/**
 * Runs a call to Postgres or Redis: a store out of reach becomes 503 service_unavailable,
 * anything else (a constraint, a domain AppError of the caller's) passes unchanged.
 */
export async function callingStorage<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw storageUnavailable(err) ?? err;
  }
}
