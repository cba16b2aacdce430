export { AppError, toAppError, toErrorBody } from './app-error';
export type { AppErrorOptions, ErrorBody } from './app-error';
export { errorCodeTable, GrpcStatus, isErrorCode } from './codes';
export type { ErrorCode, ErrorCodeInfo } from './codes';
export { fromGrpcError, isConnectionFailure, toGrpcStatus } from './grpc';
