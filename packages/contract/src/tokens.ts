import { createHash, timingSafeEqual } from 'node:crypto';

/** gRPC metadata key carrying the shared agent token (`Bearer <token>`). */
export const INTERNAL_TOKEN_METADATA_KEY = 'authorization';

/** gRPC metadata key carrying the id of the HTTP request a call serves, for the logs. */
export const REQUEST_ID_METADATA_KEY = 'x-request-id';

/** A request id worth keeping: printable ASCII, at most 200 characters. */
export const REQUEST_ID = /^[\x20-\x7e]{1,200}$/;

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** The token of an `Authorization: Bearer <token>` value; undefined for anything else. */
export function bearerToken(header: string | undefined): string | undefined {
  return header === undefined ? undefined : BEARER.exec(header)?.[1];
}

/** `Bearer <token>`, as sent. */
export function bearer(token: string): string {
  return `Bearer ${token}`;
}

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/** The expected secret's digest, made once: a service checks the same token on every call. */
let expectedDigest: { of: string; digest: Buffer } | undefined;
function digestOfExpected(expected: string): Buffer {
  if (expectedDigest?.of !== expected) expectedDigest = { of: expected, digest: digest(expected) };
  return expectedDigest.digest;
}

/**
 * Whether a presented secret is the expected one, in constant time: both sides are hashed
 * first, so neither the content nor the length leaks through timing.
 */
export function tokenMatches(presented: string | undefined, expected: string): boolean {
  return (
    timingSafeEqual(digest(presented ?? ''), digestOfExpected(expected)) && presented !== undefined
  );
}
