import { Metadata, type ServiceError } from '@grpc/grpc-js';
import {
  AppError,
  errorCodeTable,
  fromGrpcError,
  isConnectionFailure,
  GrpcStatus,
  toAppError,
  toErrorBody,
  toGrpcStatus,
} from './index';

describe('AppError', () => {
  it.each([
    ['session_not_found', 404],
    ['disk_full', 507],
    ['rate_limit_exceeded', 429],
  ] as const)('maps %s to HTTP %i through the table', (code, status) => {
    expect(errorCodeTable[code].httpStatus).toBe(status);
    expect(new AppError(code, 'x').httpStatus).toBe(status);
  });

  it('renders the error body of spec part 7 with extra fields', () => {
    const err = new AppError('execution_timeout', 'too slow', {
      details: { timeout: 1 },
      fields: { stdout: 'a', stderr: 'b' },
    });
    expect(toErrorBody(err)).toEqual({
      error: {
        code: 'execution_timeout',
        message: 'too slow',
        details: { timeout: 1 },
        stdout: 'a',
        stderr: 'b',
      },
    });
  });

  it('carries retryAfter for 429', () => {
    const body = toErrorBody(new AppError('rate_limit_exceeded', 'slow down', { retryAfter: 7 }));
    expect(body.error.retryAfter).toBe(7);
  });

  it('turns unknown errors into a generic internal_error keeping the cause', () => {
    const cause = new Error('password=hunter2 at db.ts:1');
    const err = toAppError(cause);
    expect(err.code).toBe('internal_error');
    expect(err.message).not.toContain('hunter2');
    expect(err.cause).toBe(cause);
  });
});

function serviceError(code: number, details: string, metadata = new Metadata()): ServiceError {
  return Object.assign(new Error(details), { code, details, metadata });
}

describe('toErrorBody', () => {
  it('never sends the message of an internal error', () => {
    const body = toErrorBody(new AppError('internal_error', "EACCES: open '/workspace/x'"));
    expect(body.error.message).not.toContain('EACCES');
  });
});

describe('gRPC translation', () => {
  it('round-trips an AppError through a gRPC status', () => {
    const original = new AppError('file_too_large', 'big', { details: { path: 'a', size: 9 } });
    const status = toGrpcStatus(original);
    expect(status.code).toBe(GrpcStatus.RESOURCE_EXHAUSTED);
    const back = fromGrpcError(serviceError(status.code, status.details, status.metadata));
    expect(back.code).toBe('file_too_large');
    expect(back.message).toBe('big');
    expect(back.details).toEqual({ path: 'a', size: 9 });
  });

  it('carries details holding any text (a path of a sandbox user), not only ASCII', () => {
    const original = new AppError('file_not_found', 'No such file: é✓\u00ff.txt', {
      details: { path: 'é✓\u00ff.txt' },
    });
    const status = toGrpcStatus(original);
    const back = fromGrpcError(serviceError(status.code, status.details, status.metadata));
    expect(back.details).toEqual({ path: 'é✓\u00ff.txt' });
  });

  it('maps an unreachable agent to service_unavailable with a retry hint', () => {
    const err = fromGrpcError(serviceError(GrpcStatus.UNAVAILABLE, 'connect ECONNREFUSED'));
    expect(err.code).toBe('service_unavailable');
    expect(err.retryAfter).toBeGreaterThan(0);
  });

  it('tells a lost connection from a 503 the agent sent itself', () => {
    const dropped = fromGrpcError(serviceError(GrpcStatus.UNAVAILABLE, 'Connection dropped'));
    expect(isConnectionFailure(dropped)).toBe(true);
    const sent = toGrpcStatus(new AppError('service_unavailable', 'workspace disk full'));
    const refused = fromGrpcError(serviceError(sent.code, sent.details, sent.metadata));
    expect(refused.code).toBe('service_unavailable');
    expect(isConnectionFailure(refused)).toBe(false);
    expect(
      isConnectionFailure(fromGrpcError(serviceError(GrpcStatus.DEADLINE_EXCEEDED, 'x'))),
    ).toBe(false);
  });

  it('maps other failures to internal_error', () => {
    expect(fromGrpcError(serviceError(2, 'boom')).code).toBe('internal_error');
    expect(fromGrpcError(new Error('plain')).code).toBe('internal_error');
  });
});
