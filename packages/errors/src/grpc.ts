import { Metadata, type ServiceError, type StatusObject } from '@grpc/grpc-js';
import { AppError } from './app-error';
import { errorCodeTable, GrpcStatus, isErrorCode } from './codes';

const CODE_KEY = 'app-error-code';
/** Binary (`-bin`): the body holds user text (paths), which ASCII-only metadata would refuse. */
const BODY_KEY = 'app-error-body-bin';

type GrpcErrorStatus = Partial<StatusObject> & { code: number; details: string };

/** An AppError as a gRPC status, the code and details travelling in trailing metadata. */
export function toGrpcStatus(err: AppError): GrpcErrorStatus {
  const metadata = new Metadata();
  metadata.set(CODE_KEY, err.code);
  metadata.set(
    BODY_KEY,
    Buffer.from(
      JSON.stringify({ details: err.details, fields: err.fields, retryAfter: err.retryAfter }),
    ),
  );
  return { code: errorCodeTable[err.code].grpcStatus, details: err.message, metadata };
}

function isServiceError(err: unknown): err is ServiceError {
  return err instanceof Error && typeof (err as Partial<ServiceError>).code === 'number';
}

/**
 * Whether a failed call never got the node's own answer: the connection failed or dropped
 * (an agent not listening, or one that died under the call), not an error the agent sent.
 */
export function isConnectionFailure(err: unknown): boolean {
  const cause = err instanceof AppError ? err.cause : err;
  if (!isServiceError(cause)) return false;
  const status: number = cause.code;
  return status === GrpcStatus.UNAVAILABLE && cause.metadata?.get(CODE_KEY).length !== 1;
}

/** A failed gRPC call as an AppError: the agent's own error when it sent one, else by status. */
export function fromGrpcError(err: unknown): AppError {
  if (!isServiceError(err))
    return new AppError('internal_error', 'Agent call failed', { cause: err });
  const code = err.metadata?.get(CODE_KEY)[0];
  if (isErrorCode(code)) {
    const raw = err.metadata.get(BODY_KEY)[0];
    const body = Buffer.isBuffer(raw)
      ? (JSON.parse(raw.toString('utf8')) as Record<string, unknown>)
      : {};
    return new AppError(code, err.details, {
      details: body.details as Record<string, unknown> | undefined,
      fields: body.fields as Record<string, unknown> | undefined,
      retryAfter: body.retryAfter as number | undefined,
      cause: err,
    });
  }
  const status: number = err.code;
  switch (status) {
    case GrpcStatus.UNAVAILABLE:
      return new AppError('service_unavailable', 'The execution node is unavailable', {
        retryAfter: 5,
        cause: err,
      });
    case GrpcStatus.DEADLINE_EXCEEDED:
      return new AppError('request_timeout', 'The operation timed out', { cause: err });
    default:
      return new AppError('internal_error', 'Agent call failed', { cause: err });
  }
}
