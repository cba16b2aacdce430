import type { ExecutionResult } from './types.js';

/**
 * The API's errors as classes, one per code of its error table (spec part 7 and the codes the
 * service added). Every one carries what the response said: `code`, `status`, `details`, the
 * `requestId` to quote to the operator, and `retryAfter` (seconds) where the service gave one.
 */

/** The error body every failed request of the API answers with. */
export interface ErrorBody {
  error: {
    code: string;
    message: string;
    details?: Record<string, unknown>;
    retryAfter?: number;
    stdout?: string;
    stderr?: string;
  };
}

export interface SandboxErrorInit {
  code: string;
  status: number;
  message: string;
  details?: Record<string, unknown> | undefined;
  requestId?: string | undefined;
  retryAfter?: number | undefined;
  cause?: unknown;
}

/** Any failure of the SDK: an error answer of the API, or a request that got none. */
export class SandboxError extends Error {
  /** The API's machine-readable code (`session_not_found`, …), or `network_error`. */
  readonly code: string;
  /** The HTTP status; 0 when no response came. */
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;
  /** The response's X-Request-Id. */
  readonly requestId: string | undefined;
  /** Seconds the service asked to wait before a retry (429, 503). */
  readonly retryAfter: number | undefined;

  constructor(init: SandboxErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.code = init.code;
    this.status = init.status;
    this.details = init.details;
    this.requestId = init.requestId;
    this.retryAfter = init.retryAfter;
  }
}

/** 400 invalid_request: a parameter the API refused (`details.field` names it). */
export class InvalidRequestError extends SandboxError {}
/** 400 invalid_path: a path outside /workspace, or a directory where a file was expected. */
export class InvalidPathError extends SandboxError {}
/** 401 unauthorized: a missing, unknown or revoked API key. */
export class UnauthorizedError extends SandboxError {}
/** 403 forbidden: the key lacks the scope, or the plan the feature. */
export class ForbiddenError extends SandboxError {}
/** 404 not_found: no such route or resource (a webhook). */
export class NotFoundError extends SandboxError {}
/** 404 session_not_found: the session never existed, expired or was deleted. */
export class SessionNotFoundError extends SandboxError {}
/** 404 file_not_found. */
export class FileNotFoundError extends SandboxError {}
/** 404 process_not_found: no process of the session has that pid. */
export class ProcessNotFoundError extends SandboxError {}
/** 409 conflict: the request clashes with the resource's state (admin API: a node's state). */
export class ConflictError extends SandboxError {}
/** 404: no such code context in the session (deleted, or gone with a deep sleep). */
export class ContextNotFoundError extends SandboxError {}
/** 409: the cell ended its context's process; the context runs on, fresh (its variables gone). */
export class ContextRestartedError extends SandboxError {}
/** 409: the context went with its sandbox's processes (a deep sleep): `contexts.restart` it. */
export class ContextLostError extends SandboxError {}
/** 429: the session holds as many code contexts as it may (8). */
export class ContextLimitExceededError extends SandboxError {}
/** 429: the session holds as many file watches as it may (4), or the tree is too large. */
export class WatchLimitExceededError extends SandboxError {}
/** 404: no such snapshot of the account (deleted, or another account's). */
export class SnapshotNotFoundError extends SandboxError {}
/** 429: the plan's snapshot count or bytes are used up (`details.kind`, `limit`, `used`). */
export class SnapshotQuotaExceededError extends SandboxError {}
/** 409 stdin_closed: the process takes no more input (exited, closed, or started without it). */
export class StdinClosedError extends SandboxError {}
/** 409 file_exists: a rename's destination exists (and `overwrite` was not given). */
export class FileExistsError extends SandboxError {}
/** 409 directory_not_empty: a remove without `recursive`, or a rename over, a non-empty directory. */
export class DirectoryNotEmptyError extends SandboxError {}
/** 408 request_timeout: the operation took longer than its timeout (spec 8.2). */
export class RequestTimeoutError extends SandboxError {}

/** 408 execution_timeout: the run was killed at its timeout; its partial output is kept. */
export class ExecutionTimeoutError extends SandboxError {
  readonly stdout: string;
  readonly stderr: string;

  constructor(init: SandboxErrorInit & { stdout?: string; stderr?: string }) {
    super(init);
    this.stdout = init.stdout ?? '';
    this.stderr = init.stderr ?? '';
  }
}

/** 413 payload_too_large: the request body is over the API's limit. */
export class PayloadTooLargeError extends SandboxError {}
/** 413 file_too_large: a file over the plan's size limit. */
export class FileTooLargeError extends SandboxError {}
/** 429 rate_limit_exceeded: the key's requests per minute are spent (see `retryAfter`). */
export class RateLimitedError extends SandboxError {}
/** 429 session_limit_exceeded: the plan's concurrent sessions are all in use. */
export class SessionLimitExceededError extends SandboxError {}
/** 500 internal_error: a fault of the service (quote `requestId`). */
export class InternalServerError extends SandboxError {}
/** 502 bad_gateway. */
export class BadGatewayError extends SandboxError {}
/** 503 service_unavailable: temporary; retry after `retryAfter`. */
export class ServiceUnavailableError extends SandboxError {}
/** 507 disk_full: the session's disk is full (`details.used`, `details.limit`). */
export class DiskFullError extends SandboxError {}
/** No response: the connection failed or was cut (code `network_error`, status 0). */
export class NetworkError extends SandboxError {}

/*
 * Failures of this side, never answered by the API (status 0), as classes too: whatever a
 * method of the SDK throws is a SandboxError.
 */

/**
 * No answer, or no byte of a streamed answer, within the client's `requestTimeoutMs` (code
 * `client_timeout`): a stalled connection. A NetworkError, since it is one: reads are sent
 * again like any request cut off.
 */
export class ClientTimeoutError extends NetworkError {}
/** The call's `signal` aborted it (code `aborted`); `cause` is the signal's reason. */
export class AbortedError extends SandboxError {}

/**
 * The runtime has no WebSocket and none was given (code `websocket_unavailable`): Node 20
 * has none by default; pass the `ws` package's as the `WebSocket` option.
 */
export class WebSocketUnavailableError extends SandboxError {}
/**
 * A terminal's connection is closed (code `terminal_closed`): it dropped, could not open,
 * or `close()` hung the shell up before it ended. A NetworkError, as a cut connection is.
 */
export class TerminalClosedError extends NetworkError {}

/**
 * A run started in the background ended before it had a process (code `run_not_started`): a
 * code run whose packages failed to install. `result` is how it ended.
 */
export class RunNotStartedError extends SandboxError {
  readonly result: ExecutionResult;

  constructor(init: SandboxErrorInit & { result: ExecutionResult }) {
    super(init);
    this.result = init.result;
  }
}

/** The class of each code; a code the SDK does not know yet is a plain SandboxError. */
export const ERROR_CLASSES = {
  invalid_request: InvalidRequestError,
  invalid_path: InvalidPathError,
  unauthorized: UnauthorizedError,
  forbidden: ForbiddenError,
  not_found: NotFoundError,
  session_not_found: SessionNotFoundError,
  file_not_found: FileNotFoundError,
  process_not_found: ProcessNotFoundError,
  context_not_found: ContextNotFoundError,
  context_restarted: ContextRestartedError,
  context_lost: ContextLostError,
  context_limit_exceeded: ContextLimitExceededError,
  watch_limit_exceeded: WatchLimitExceededError,
  snapshot_not_found: SnapshotNotFoundError,
  snapshot_quota_exceeded: SnapshotQuotaExceededError,
  stdin_closed: StdinClosedError,
  conflict: ConflictError,
  file_exists: FileExistsError,
  directory_not_empty: DirectoryNotEmptyError,
  request_timeout: RequestTimeoutError,
  execution_timeout: ExecutionTimeoutError,
  payload_too_large: PayloadTooLargeError,
  file_too_large: FileTooLargeError,
  rate_limit_exceeded: RateLimitedError,
  session_limit_exceeded: SessionLimitExceededError,
  internal_error: InternalServerError,
  bad_gateway: BadGatewayError,
  service_unavailable: ServiceUnavailableError,
  disk_full: DiskFullError,
} as const satisfies Record<string, typeof SandboxError>;

export type ApiErrorCode = keyof typeof ERROR_CLASSES;

/** The HTTP status of each code (for errors that come inside a stream, without one). */
export const ERROR_STATUS: Readonly<Record<ApiErrorCode, number>> = {
  invalid_request: 400,
  invalid_path: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  session_not_found: 404,
  file_not_found: 404,
  process_not_found: 404,
  context_not_found: 404,
  context_restarted: 409,
  context_lost: 409,
  context_limit_exceeded: 429,
  watch_limit_exceeded: 429,
  snapshot_not_found: 404,
  snapshot_quota_exceeded: 429,
  stdin_closed: 409,
  conflict: 409,
  file_exists: 409,
  directory_not_empty: 409,
  request_timeout: 408,
  execution_timeout: 408,
  payload_too_large: 413,
  file_too_large: 413,
  rate_limit_exceeded: 429,
  session_limit_exceeded: 429,
  internal_error: 500,
  bad_gateway: 502,
  service_unavailable: 503,
  disk_full: 507,
};

/** The HTTP status of `code`; 500 for a code the SDK does not know. */
export function statusOf(code: unknown): number {
  return typeof code === 'string' && Object.hasOwn(ERROR_STATUS, code)
    ? ERROR_STATUS[code as ApiErrorCode]
    : 500;
}

function isErrorBody(value: unknown): value is ErrorBody {
  const error = (value as Partial<ErrorBody> | null)?.error;
  return typeof error?.code === 'string' && typeof error.message === 'string';
}

/**
 * The error of an answer with `status` and `body` (parsed JSON, or undefined when it was not
 * JSON); `retryAfter` from the Retry-After header when the body has none.
 */
export function errorFromResponse(
  status: number,
  body: unknown,
  headers: { requestId?: string | undefined; retryAfter?: number | undefined },
): SandboxError {
  if (!isErrorBody(body)) {
    // A proxy in between, or a service too broken to say: classed by status alone.
    const ErrorClass =
      status === 503
        ? ServiceUnavailableError
        : status === 429
          ? RateLimitedError
          : status >= 500
            ? InternalServerError
            : SandboxError;
    return new ErrorClass({
      code:
        status === 503
          ? 'service_unavailable'
          : status === 429
            ? 'rate_limit_exceeded'
            : 'http_error',
      status,
      message: `HTTP ${status} without an error body`,
      requestId: headers.requestId,
      retryAfter: headers.retryAfter,
    });
  }
  const { code, message, details, retryAfter, stdout, stderr } = body.error;
  const init = {
    code,
    status,
    message,
    details,
    requestId: headers.requestId,
    retryAfter: retryAfter ?? headers.retryAfter,
  };
  if (code === 'execution_timeout') return new ExecutionTimeoutError({ ...init, stdout, stderr });
  const ErrorClass: typeof SandboxError = Object.hasOwn(ERROR_CLASSES, code)
    ? ERROR_CLASSES[code as ApiErrorCode]
    : SandboxError;
  return new ErrorClass(init);
}
