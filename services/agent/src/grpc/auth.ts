import type { Metadata } from '@grpc/grpc-js';
import { bearerToken, INTERNAL_TOKEN_METADATA_KEY, tokenMatches } from '@sandbox/contract';
import { AppError } from '@sandbox/errors';

/** Checks the shared agent token in constant time; no token configured means no check. */
export function checkInternalToken(metadata: Metadata, expected: string | undefined): void {
  if (expected === undefined) return;
  const sent = metadata.get(INTERNAL_TOKEN_METADATA_KEY)[0];
  if (!tokenMatches(bearerToken(typeof sent === 'string' ? sent : undefined), expected)) {
    throw new AppError('unauthorized', 'Invalid agent token');
  }
}
