import { randomString } from '../auth/api-keys';
import { previewLabelOf, SESSION_ID_PREFIX, SESSION_ID_RANDOM_LENGTH } from '@sandbox/contract';

const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

export function newSessionId(): string {
  return SESSION_ID_PREFIX + randomString(SESSION_ID_RANDOM_LENGTH, ID_ALPHABET);
}

/** `https://ses-<id>.{preview_domain}` */
export function previewUrl(sessionId: string, scheme: string, previewDomain: string): string {
  return `${scheme}://${previewLabelOf(sessionId)}.${previewDomain}`;
}
