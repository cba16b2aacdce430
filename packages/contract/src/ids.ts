/** Session ids: `ses_` + 24 lowercase alphanumerics, so that a preview label maps back to one. */
export const SESSION_ID_PREFIX = 'ses_';
export const SESSION_ID_RANDOM_LENGTH = 24;
/** The random part of a session id (a regular expression's source). */
export const SESSION_ID_BODY = '[a-z0-9]{24}';
export const SESSION_ID_PATTERN = new RegExp(`^${SESSION_ID_PREFIX}${SESSION_ID_BODY}$`);

export function isSessionId(value: unknown): value is string {
  return typeof value === 'string' && SESSION_ID_PATTERN.test(value);
}

/** A session's preview host label: `ses-<id>` (DNS labels carry no underscore). */
export function previewLabelOf(sessionId: string): string {
  return sessionId.replace(SESSION_ID_PREFIX, 'ses-');
}

/** The session of a preview label's 24-character id part. */
export function sessionIdOfLabel(id: string): string {
  return `${SESSION_ID_PREFIX}${id}`;
}

/** Snapshot ids: `snap_` + 24 lowercase alphanumerics (the blob store's object names, too). */
export const SNAPSHOT_ID_PREFIX = 'snap_';
export const SNAPSHOT_ID_PATTERN = new RegExp(`^${SNAPSHOT_ID_PREFIX}${SESSION_ID_BODY}$`);

export function isSnapshotId(value: unknown): value is string {
  return typeof value === 'string' && SNAPSHOT_ID_PATTERN.test(value);
}
