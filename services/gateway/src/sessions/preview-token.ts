import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { MAX_PREVIEW_TOKEN_LENGTH } from '@sandbox/contract';

export function newPreviewToken(): string {
  return 'pvt_' + randomBytes(24).toString('base64url');
}

export function hashPreviewToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** Whether `presented` is the token whose hash is `expected`, in constant time. */
export function previewTokenMatches(presented: string | undefined, expected: Buffer): boolean {
  if (presented === undefined || presented.length > MAX_PREVIEW_TOKEN_LENGTH) return false;
  return timingSafeEqual(hashPreviewToken(presented), expected);
}
