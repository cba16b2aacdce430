import type { Database } from '../db/database';
import type { SecretBox } from '../secrets/secret-box';

/**
 * Seals again under the current key every live session's preview token sealed under an older
 * one (a SECRETS_KEY rotation, docs/security.md), as webhook secrets are; returns how many.
 */
export async function resealPreviewTokens(
  db: Database,
  box: Pick<SecretBox, 'isStale' | 'open' | 'seal'>,
): Promise<number> {
  const { rows } = await db.query<{ id: string; preview_token_sealed: string }>(
    `SELECT id, preview_token_sealed FROM sessions
      WHERE preview_token_sealed IS NOT NULL AND deleted_at IS NULL AND expires_at > now()`,
  );
  let resealed = 0;
  for (const row of rows.filter((r) => box.isStale(r.preview_token_sealed))) {
    await db.query(
      'UPDATE sessions SET preview_token_sealed = $2 WHERE id = $1 AND preview_token_sealed = $3',
      [row.id, box.seal(box.open(row.preview_token_sealed)), row.preview_token_sealed],
    );
    resealed += 1;
  }
  return resealed;
}
