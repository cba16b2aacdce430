import { generateApiKey, hashApiKey, looksLikeApiKey } from './api-keys';

describe('api keys', () => {
  it('generates sk_live_ keys with 40 random characters and their hash', () => {
    const key = generateApiKey();
    expect(key.value).toMatch(/^sk_live_[A-Za-z0-9]{40}$/);
    expect(key.hash.equals(hashApiKey(key.value))).toBe(true);
    expect(key.prefix).toBe(key.value.slice(0, 14));
    expect(key.hash.toString('hex')).not.toContain(key.value);
  });

  it('never generates the same key twice', () => {
    const values = new Set(Array.from({ length: 200 }, () => generateApiKey().value));
    expect(values.size).toBe(200);
  });

  it('recognises the key shape', () => {
    expect(looksLikeApiKey(generateApiKey().value)).toBe(true);
    expect(looksLikeApiKey('sk_live_short')).toBe(false);
    expect(looksLikeApiKey('Bearer x')).toBe(false);
  });
});
