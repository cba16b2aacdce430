import { createHash, randomInt } from 'node:crypto';

const KEY_PREFIX = 'sk_live_';
const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const RANDOM_LENGTH = 40;
const KEY_SHAPE = /^sk_live_[A-Za-z0-9]{32,128}$/;

export function randomString(length: number, alphabet = ALPHABET): string {
  let out = '';
  for (let i = 0; i < length; i += 1) out += alphabet[randomInt(alphabet.length)];
  return out;
}

/** The stored form of a key: sha256 (keys are long random strings, so no slow hash is needed). */
export function hashApiKey(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}

export interface NewApiKey {
  value: string;
  hash: Buffer;
  prefix: string;
}

/** A new `sk_live_…` key: the value is shown once, only the hash is stored. */
export function generateApiKey(): NewApiKey {
  const value = KEY_PREFIX + randomString(RANDOM_LENGTH);
  return { value, hash: hashApiKey(value), prefix: value.slice(0, KEY_PREFIX.length + 6) };
}

export function looksLikeApiKey(value: string): boolean {
  return KEY_SHAPE.test(value);
}
