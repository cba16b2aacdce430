import { randomBytes } from 'node:crypto';
import { SecretBox } from './secret-box';

describe('SecretBox', () => {
  const key = randomBytes(32);

  it('opens what it sealed, and never holds the plaintext in the sealed form', () => {
    const box = new SecretBox(key);
    const sealed = box.seal('whsec_topsecret');
    expect(sealed).not.toContain('topsecret');
    expect(sealed.startsWith(`v1.${box.currentKeyId}.`)).toBe(true);
    expect(box.open(sealed)).toBe('whsec_topsecret');
    expect(box.seal('same')).not.toBe(box.seal('same'));
  });

  it('refuses a value that was tampered with', () => {
    const box = new SecretBox(key);
    const parts = box.seal('secret').split('.');
    const ciphertext = Buffer.from(parts[3] ?? '', 'base64url');
    ciphertext[0] = (ciphertext[0] ?? 0) ^ 1;
    parts[3] = ciphertext.toString('base64url');
    expect(() => box.open(parts.join('.'))).toThrow();
  });

  it('opens values of a previous key after a rotation, and marks them stale', () => {
    const old = new SecretBox(key);
    const sealed = old.seal('rotate me');
    const rotated = new SecretBox(randomBytes(32), [key]);
    expect(rotated.open(sealed)).toBe('rotate me');
    expect(rotated.isStale(sealed)).toBe(true);
    expect(rotated.isStale(rotated.seal('x'))).toBe(false);
    const unrelated = new SecretBox(randomBytes(32));
    expect(() => unrelated.open(sealed)).toThrow(/configured keys/);
    // A value of a key no longer configured is not stale (it cannot be sealed again).
    expect(unrelated.isStale(sealed)).toBe(false);
    expect(unrelated.canOpen(sealed)).toBe(false);
  });

  it('accepts only 32-byte keys', () => {
    expect(() => new SecretBox(randomBytes(16))).toThrow(/32 bytes/);
  });
});
