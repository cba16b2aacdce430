import { errorCodeTable } from '@sandbox/errors';
import {
  ERROR_CLASSES,
  ERROR_STATUS,
  errorFromResponse,
  ExecutionTimeoutError,
  SandboxError,
  ServiceUnavailableError,
  SessionNotFoundError,
} from '../src/errors';
import { retryAfterSeconds, retryDelayMs } from '../src/http';

describe('the error table', () => {
  it("has a class and the service's status for every code the service answers with", () => {
    expect(Object.keys(ERROR_CLASSES).sort()).toEqual(Object.keys(errorCodeTable).sort());
    for (const [code, info] of Object.entries(errorCodeTable)) {
      expect([code, ERROR_STATUS[code as keyof typeof ERROR_STATUS]]).toEqual([
        code,
        info.httpStatus,
      ]);
    }
  });

  it('builds the class of the code with what the answer said', () => {
    const err = errorFromResponse(
      404,
      { error: { code: 'session_not_found', message: 'gone', details: { sessionId: 's' } } },
      { requestId: 'req-1' },
    );
    expect(err).toBeInstanceOf(SessionNotFoundError);
    expect(err).toMatchObject({ code: 'session_not_found', status: 404, requestId: 'req-1' });
    expect(err.details).toEqual({ sessionId: 's' });
    const timeout = errorFromResponse(
      408,
      { error: { code: 'execution_timeout', message: 'slow', stdout: 'a', stderr: 'b' } },
      {},
    );
    expect(timeout).toBeInstanceOf(ExecutionTimeoutError);
    expect(timeout).toMatchObject({ stdout: 'a', stderr: 'b' });
  });

  it('classes an answer without an error body by its status, and an unknown code as the base', () => {
    expect(errorFromResponse(503, undefined, { retryAfter: 2 })).toBeInstanceOf(
      ServiceUnavailableError,
    );
    const odd = errorFromResponse(400, { error: { code: 'toString', message: 'x' } }, {});
    expect(odd.constructor).toBe(SandboxError);
  });
});

describe('retry timing', () => {
  it('reads Retry-After as seconds or as a date', () => {
    expect(retryAfterSeconds('3')).toBe(3);
    expect(retryAfterSeconds(new Date(10_000).toUTCString(), 4_000)).toBe(6);
    expect(retryAfterSeconds(null)).toBeUndefined();
    expect(retryAfterSeconds('soon')).toBeUndefined();
  });

  it('waits what the service asked plus at most 10 %, else backs off with jitter', () => {
    expect(retryDelayMs(0, { retryAfter: 2 }, 0, () => 0)).toBe(2000);
    expect(retryDelayMs(0, { retryAfter: 2 }, 0, () => 0.999)).toBeLessThan(2200);
    expect(retryDelayMs(0, { rateLimitReset: 12 }, 10_000, () => 0)).toBe(2000);
    expect(retryDelayMs(3, {}, 0, () => 1)).toBe(2000); // 250 ms × 2³
    expect(retryDelayMs(30, {}, 0, () => 1)).toBe(8000); // capped
    expect(retryDelayMs(3, {}, 0, () => 0)).toBe(50); // never a busy loop
  });
});
