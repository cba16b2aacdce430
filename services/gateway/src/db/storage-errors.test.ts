import { AppError } from '@sandbox/errors';
import { callingStorage, storageUnavailable } from './storage-errors';

function withCode(message: string, code?: string, name?: string): Error {
  const err = new Error(message) as Error & { code?: string };
  if (code !== undefined) err.code = code;
  if (name !== undefined) err.name = name;
  return err;
}

describe('storageUnavailable', () => {
  it.each([
    withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'),
    withCode('the database system is shutting down', '57P01'),
    withCode('connection failure', '08006'),
    withCode('Reached the max retries per request limit', undefined, 'MaxRetriesPerRequestError'),
    withCode('Connection is closed.'),
    withCode('Connection terminated unexpectedly'),
    withCode('timeout exceeded when trying to connect'),
  ])('turns %s into 503 service_unavailable with Retry-After', (err) => {
    const translated = storageUnavailable(err);
    expect(translated).toBeInstanceOf(AppError);
    expect(translated).toMatchObject({ code: 'service_unavailable', retryAfter: 1, cause: err });
  });

  it('leaves other errors alone', () => {
    expect(storageUnavailable(withCode('duplicate key', '23505'))).toBeUndefined();
    expect(storageUnavailable(new AppError('session_not_found', 'x'))).toBeUndefined();
    expect(storageUnavailable('ECONNREFUSED')).toBeUndefined();
  });
});

describe('callingStorage', () => {
  it('translates a store out of reach and passes other failures unchanged', async () => {
    const refused = withCode('refused', 'ECONNREFUSED');
    await expect(callingStorage(() => Promise.reject(refused))).rejects.toMatchObject({
      code: 'service_unavailable',
    });
    const domain = new AppError('session_not_found', 'gone');
    await expect(callingStorage(() => Promise.reject(domain))).rejects.toBe(domain);
    await expect(callingStorage(() => Promise.resolve(7))).resolves.toBe(7);
  });
});
