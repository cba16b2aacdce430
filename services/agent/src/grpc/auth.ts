import { createHash, timingSafeEqual } from 'node:crypto';
import type { Metadata } from '@grpc/grpc-js';
import { AppError } from '@sandbox/errors';
import { INTERNAL_TOKEN_METADATA_KEY } from '@sandbox/proto';

const digest = (value: string): Buffer => createHash('sha256').update(value).digest();

/** Checks the shared agent token in constant time; no token configured means no check. */
export function checkInternalToken(metadata: Metadata, expected: string | undefined): void {
  if (expected === undefined) return;
  const sent = metadata.get(INTERNAL_TOKEN_METADATA_KEY)[0];
  const token = typeof sent === 'string' ? sent.replace(/^Bearer /, '') : '';
  if (!timingSafeEqual(digest(token), digest(expected))) {
    throw new AppError('unauthorized', 'Invalid agent token');
  }
}
