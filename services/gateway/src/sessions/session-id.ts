import { randomString } from '../auth/api-keys';

const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const SESSION_ID = /^ses_[a-z0-9]{24}$/;

/** `ses_` + 24 lowercase alphanumerics, so that the preview label maps back to one session. */
export function newSessionId(): string {
  return 'ses_' + randomString(24, ID_ALPHABET);
}

export function isSessionId(value: string): boolean {
  return SESSION_ID.test(value);
}

/** `https://ses-<id>.{preview_domain}` */
export function previewUrl(sessionId: string, scheme: string, previewDomain: string): string {
  return `${scheme}://${sessionId.replace('_', '-')}.${previewDomain}`;
}
