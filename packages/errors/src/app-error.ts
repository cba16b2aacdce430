import { errorCodeTable, type ErrorCode } from './codes';

export interface AppErrorOptions {
  /** Code-specific facts, sent to the client as `error.details`. */
  details?: Record<string, unknown>;
  /** Extra top-level fields of the error object the spec asks for (e.g. `stdout`, `stderr`). */
  fields?: Record<string, unknown>;
  /** Seconds the client should wait before retrying (429, 503): `Retry-After` and `error.retryAfter`. */
  retryAfter?: number;
  cause?: unknown;
}

/** The one error type of the service. Translated to HTTP/gRPC only at the edges. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;
  readonly fields: Record<string, unknown> | undefined;
  readonly retryAfter: number | undefined;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.details = options.details;
    this.fields = options.fields;
    this.retryAfter = options.retryAfter;
  }

  get httpStatus(): number {
    return errorCodeTable[this.code].httpStatus;
  }
}

export interface ErrorBody {
  error: {
    code: ErrorCode;
    message: string;
    details?: Record<string, unknown>;
    retryAfter?: number;
    [field: string]: unknown;
  };
}

const GENERIC_INTERNAL_MESSAGE = 'An internal error occurred. Please retry later.';

/** Anything thrown, as an AppError; unknown errors become a generic `internal_error`. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  return new AppError('internal_error', GENERIC_INTERNAL_MESSAGE, { cause: err });
}

/** The error body of spec part 7; an internal error says nothing of its cause. */
export function toErrorBody(err: AppError): ErrorBody {
  // A fault's own message (a system error, a path) is for the logs, never for the caller.
  const message = err.code === 'internal_error' ? GENERIC_INTERNAL_MESSAGE : err.message;
  const body: ErrorBody = { error: { ...err.fields, code: err.code, message } };
  if (err.details !== undefined) body.error.details = err.details;
  if (err.retryAfter !== undefined) body.error.retryAfter = err.retryAfter;
  return body;
}
