import { AppError } from '@sandbox/errors';
import { PAID_PLAN } from '../limits/plan-fixtures';
import { checkMetadata, resolveResourceLimits, resolveTtl } from './session-limits';

const paid = PAID_PLAN;

function errorOf(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    if (err instanceof AppError) return err;
  }
  throw new Error('expected an AppError');
}

describe('resolveTtl', () => {
  it('defaults to a day, capped by the plan', () => {
    expect(resolveTtl(undefined, paid)).toBe(86_400);
    expect(resolveTtl(undefined, { ...paid, maxSessionTtlS: 3600 })).toBe(3600);
  });

  it.each([null, 0, -1, 1.5, '60', true, 604_801])(
    'refuses %p with field, value and max',
    (ttl) => {
      const err = errorOf(() => resolveTtl(ttl, paid));
      expect(err.code).toBe('invalid_request');
      expect(err.details).toEqual({ field: 'ttl', value: ttl, max: 604_800 });
    },
  );
});

describe('resolveResourceLimits', () => {
  it('fills what was not sent with defaults within the plan', () => {
    const small = { ...paid, maxMemoryMb: 512 };
    expect(resolveResourceLimits({ cpu: 1 }, small)).toEqual({
      memory: 512,
      cpu: 1,
      timeout: 30,
      disk: 1024,
    });
  });

  it('refuses memory past the plan maximum', () => {
    expect(errorOf(() => resolveResourceLimits({ memory: 4097 }, paid)).details).toMatchObject({
      field: 'resourceLimits.memory',
      max: 4096,
    });
  });
});

describe('checkMetadata', () => {
  it('accepts 16 KB of JSON and refuses one byte more', () => {
    const at = (size: number) => ({ k: 'x'.repeat(size - '{"k":""}'.length) });
    expect(() => checkMetadata(at(16 * 1024))).not.toThrow();
    expect(errorOf(() => checkMetadata(at(16 * 1024 + 1))).details).toMatchObject({
      field: 'metadata',
    });
  });
});
