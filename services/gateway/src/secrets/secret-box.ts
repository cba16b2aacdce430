import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { AppError } from '@sandbox/errors';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

interface Key {
  id: string;
  bytes: Buffer;
}

/** A key's id: the first 8 hex characters of its sha256 (tells which key sealed a value). */
function toKey(bytes: Buffer): Key {
  return { id: createHash('sha256').update(bytes).digest('hex').slice(0, 8), bytes };
}

/**
 * Encrypts secrets at rest with AES-256-GCM. Sealed values name the key that sealed them, so a
 * rotation adds a new current key and keeps the old ones for opening until every value has
 * been sealed again (docs/security.md).
 */
export class SecretBox {
  private readonly current: Key;
  private readonly keys: Map<string, Key>;

  constructor(currentKey: Buffer, previousKeys: readonly Buffer[] = []) {
    for (const key of [currentKey, ...previousKeys]) {
      if (key.length !== 32) throw new Error('A secrets key must be 32 bytes (base64 of 32 bytes)');
    }
    this.current = toKey(currentKey);
    this.keys = new Map([this.current, ...previousKeys.map(toKey)].map((key) => [key.id, key]));
  }

  get currentKeyId(): string {
    return this.current.id;
  }

  /** `v1.<key id>.<iv>.<ciphertext>.<tag>`, base64url parts. */
  seal(plaintext: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current.bytes, iv);
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, this.current.id, iv, ciphertext, cipher.getAuthTag()]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
      .join('.');
  }

  open(sealed: string): string {
    const [version, keyId, iv, ciphertext, tag] = sealed.split('.');
    const key = keyId === undefined ? undefined : this.keys.get(keyId);
    if (version !== VERSION || key === undefined || !iv || ciphertext === undefined || !tag) {
      throw new AppError(
        'internal_error',
        'A stored secret cannot be opened with the configured keys',
      );
    }
    const decipher = createDecipheriv('aes-256-gcm', key.bytes, Buffer.from(iv, 'base64url'));
    const authTag = Buffer.from(tag, 'base64url');
    if (authTag.length !== TAG_BYTES)
      throw new AppError('internal_error', 'A stored secret is corrupt');
    decipher.setAuthTag(authTag);
    return Buffer.concat([
      decipher.update(Buffer.from(ciphertext, 'base64url')),
      decipher.final(),
    ]).toString('utf8');
  }

  /**
   * Whether `sealed` was sealed with one of the previous keys (so it can be opened, and should
   * be sealed again with the current one).
   */
  isStale(sealed: string): boolean {
    const keyId = sealed.split('.')[1];
    return keyId !== undefined && keyId !== this.current.id && this.keys.has(keyId);
  }

  /** Whether a configured key sealed `sealed`. */
  canOpen(sealed: string): boolean {
    const keyId = sealed.split('.')[1];
    return keyId !== undefined && this.keys.has(keyId);
  }
}
