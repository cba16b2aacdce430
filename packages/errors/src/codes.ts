/** gRPC status numbers (https://grpc.github.io/grpc/core/md_doc_statuscodes.html). */
export const GrpcStatus = {
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

export type GrpcStatusCode = (typeof GrpcStatus)[keyof typeof GrpcStatus];

/** Every machine-readable error code the service can answer with. */
export type ErrorCode =
  | 'invalid_request'
  | 'invalid_path'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'session_not_found'
  | 'file_not_found'
  | 'process_not_found'
  | 'context_not_found'
  | 'snapshot_not_found'
  | 'context_restarted'
  | 'context_lost'
  | 'stdin_closed'
  | 'file_exists'
  | 'directory_not_empty'
  | 'conflict'
  | 'request_timeout'
  | 'execution_timeout'
  | 'payload_too_large'
  | 'file_too_large'
  | 'rate_limit_exceeded'
  | 'session_limit_exceeded'
  | 'context_limit_exceeded'
  | 'watch_limit_exceeded'
  | 'snapshot_quota_exceeded'
  | 'internal_error'
  | 'bad_gateway'
  | 'service_unavailable'
  | 'disk_full';

export interface ErrorCodeInfo {
  readonly httpStatus: number;
  readonly grpcStatus: GrpcStatusCode;
}

/** The one table: each code's HTTP status and gRPC status. A missing row does not compile. */
export const errorCodeTable: Readonly<Record<ErrorCode, ErrorCodeInfo>> = {
  invalid_request: { httpStatus: 400, grpcStatus: GrpcStatus.INVALID_ARGUMENT },
  invalid_path: { httpStatus: 400, grpcStatus: GrpcStatus.INVALID_ARGUMENT },
  unauthorized: { httpStatus: 401, grpcStatus: GrpcStatus.UNAUTHENTICATED },
  forbidden: { httpStatus: 403, grpcStatus: GrpcStatus.PERMISSION_DENIED },
  not_found: { httpStatus: 404, grpcStatus: GrpcStatus.NOT_FOUND },
  session_not_found: { httpStatus: 404, grpcStatus: GrpcStatus.NOT_FOUND },
  file_not_found: { httpStatus: 404, grpcStatus: GrpcStatus.NOT_FOUND },
  process_not_found: { httpStatus: 404, grpcStatus: GrpcStatus.NOT_FOUND },
  context_not_found: { httpStatus: 404, grpcStatus: GrpcStatus.NOT_FOUND },
  // Unknown, deleted, or another account's snapshot (ADR 44).
  snapshot_not_found: { httpStatus: 404, grpcStatus: GrpcStatus.NOT_FOUND },
  // A cell ended its context's process: the context runs on, fresh (ADR 42).
  context_restarted: { httpStatus: 409, grpcStatus: GrpcStatus.FAILED_PRECONDITION },
  // A context gone with its runner (deep sleep, restart): restart it (ADR 42).
  context_lost: { httpStatus: 409, grpcStatus: GrpcStatus.FAILED_PRECONDITION },
  stdin_closed: { httpStatus: 409, grpcStatus: GrpcStatus.FAILED_PRECONDITION },
  file_exists: { httpStatus: 409, grpcStatus: GrpcStatus.FAILED_PRECONDITION },
  directory_not_empty: { httpStatus: 409, grpcStatus: GrpcStatus.FAILED_PRECONDITION },
  conflict: { httpStatus: 409, grpcStatus: GrpcStatus.FAILED_PRECONDITION },
  request_timeout: { httpStatus: 408, grpcStatus: GrpcStatus.DEADLINE_EXCEEDED },
  execution_timeout: { httpStatus: 408, grpcStatus: GrpcStatus.DEADLINE_EXCEEDED },
  payload_too_large: { httpStatus: 413, grpcStatus: GrpcStatus.RESOURCE_EXHAUSTED },
  file_too_large: { httpStatus: 413, grpcStatus: GrpcStatus.RESOURCE_EXHAUSTED },
  rate_limit_exceeded: { httpStatus: 429, grpcStatus: GrpcStatus.RESOURCE_EXHAUSTED },
  session_limit_exceeded: { httpStatus: 429, grpcStatus: GrpcStatus.RESOURCE_EXHAUSTED },
  context_limit_exceeded: { httpStatus: 429, grpcStatus: GrpcStatus.RESOURCE_EXHAUSTED },
  watch_limit_exceeded: { httpStatus: 429, grpcStatus: GrpcStatus.RESOURCE_EXHAUSTED },
  // The plan's snapshot count or bytes: details.limit, details.used, details.kind (ADR 44).
  snapshot_quota_exceeded: { httpStatus: 429, grpcStatus: GrpcStatus.RESOURCE_EXHAUSTED },
  internal_error: { httpStatus: 500, grpcStatus: GrpcStatus.INTERNAL },
  bad_gateway: { httpStatus: 502, grpcStatus: GrpcStatus.UNAVAILABLE },
  service_unavailable: { httpStatus: 503, grpcStatus: GrpcStatus.UNAVAILABLE },
  disk_full: { httpStatus: 507, grpcStatus: GrpcStatus.RESOURCE_EXHAUSTED },
};

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(errorCodeTable, value);
}
