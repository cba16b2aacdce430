import { AppError } from '@sandbox/errors';
import { checkStorableJson, isStorableText } from './storable-json';

describe('checkStorableJson', () => {
  it('accepts ordinary JSON, including astral characters', () => {
    expect(() =>
      checkStorableJson({ a: [1, 'x', { b: '😀 ✓' }], c: null }, 'metadata'),
    ).not.toThrow();
  });

  it.each([{ s: 'a\u0000b' }, { 'k\u0000': 1 }, { s: '\ud800' }, { s: 'x\udc00' }, [[['\u0000']]]])(
    'refuses %j',
    (value) => {
      expect(() => checkStorableJson(value, 'metadata')).toThrow(AppError);
    },
  );

  it.each([{ n: Infinity }, { n: -Infinity }, { n: NaN }, [2 ** 53 + 2]])(
    'refuses a number that JSON cannot carry back exactly: %j',
    (value) => {
      expect(() => checkStorableJson(value, 'metadata')).toThrow(/cannot be stored exactly/);
    },
  );

  it('accepts fractions and safe integers', () => {
    expect(() =>
      checkStorableJson({ a: 0.1, b: -1.5e-300, c: Number.MAX_SAFE_INTEGER }, 'metadata'),
    ).not.toThrow();
  });

  it('refuses deep nesting without exhausting the stack', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i += 1) deep = [deep];
    expect(() => checkStorableJson(deep, 'metadata')).toThrow(/nests deeper/);
  });

  it('tells storable text', () => {
    expect(isStorableText('plain')).toBe(true);
    expect(isStorableText('\ud83d\ude00')).toBe(true);
    expect(isStorableText('\ud83d')).toBe(false);
  });
});
