import { AppError } from '@sandbox/errors';
import { checkContextId, isContextId } from './context-id';

describe('context ids', () => {
  it('accepts what the runner makes', () => {
    expect(isContextId('ctx_0123456789abcdef01234567')).toBe(true);
  });

  it.each(['ctx_', 'ctx_0123456789ABCDEF01234567', 'ses_0123456789abcdef01234567', 'ctx_../x', 7])(
    'refuses %p',
    (value) => {
      expect(isContextId(value)).toBe(false);
    },
  );

  it('answers a malformed id as an unknown one', () => {
    expect(() => checkContextId('ctx_nope')).toThrow(AppError);
    try {
      checkContextId('ctx_nope');
    } catch (err) {
      expect((err as AppError).code).toBe('context_not_found');
    }
  });
});
