import type { NextFunction, Request, Response } from 'express';
import { AppError, toAppError, toErrorBody } from '@sandbox/errors';

/**
 * Client errors raised by express's own layers (body parser, router), which carry an HTTP
 * status and `expose: true`: malformed JSON, oversize bodies, bad URL encoding.
 */
function fromExpress(err: unknown): AppError | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const { status, type, expose } = err as { status?: unknown; type?: unknown; expose?: unknown };
  if (type === 'entity.parse.failed') {
    return new AppError('invalid_request', 'Malformed JSON body', { cause: err });
  }
  if (status === 413 || type === 'entity.too.large') {
    return new AppError('payload_too_large', 'Request body too large', { cause: err });
  }
  if (type === 'encoding.unsupported' || type === 'charset.unsupported' || status === 415) {
    return new AppError('invalid_request', 'Unsupported body encoding', { cause: err });
  }
  if (err instanceof URIError) {
    return new AppError('invalid_request', 'Malformed URL encoding', { cause: err });
  }
  if (typeof status === 'number' && status >= 400 && status < 500 && expose === true) {
    return new AppError('invalid_request', 'Malformed request', { cause: err });
  }
  return undefined;
}

const NETWORK_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
/** SQLSTATE classes of a database out of reach: connection exceptions, shutting down. */
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[1-3])$/;
const CONNECTION_LOST =
  /^(Connection is closed|Connection terminated|timeout exceeded when trying to connect)/i;

/**
 * Postgres or Redis out of reach (refused, reset, shutting down, retries exhausted): a
 * temporary fault, 503 service_unavailable with Retry-After, not a server bug.
 */
function fromDependency(err: unknown): AppError | undefined {
  if (!(err instanceof Error)) return undefined;
  const { code } = err as { code?: unknown };
  const unavailable =
    (typeof code === 'string' && (NETWORK_ERRORS.has(code) || UNAVAILABLE_SQLSTATE.test(code))) ||
    err.name === 'MaxRetriesPerRequestError' ||
    CONNECTION_LOST.test(err.message);
  if (!unavailable) return undefined;
  return new AppError('service_unavailable', 'The service is temporarily unavailable; retry', {
    retryAfter: 1,
    cause: err,
  });
}

/** The one place where errors become HTTP responses (spec part 7). */
export function errorHandler(err: unknown, req: Request, res: Response, _next: NextFunction): void {
  const appError = fromExpress(err) ?? fromDependency(err) ?? toAppError(err);
  if (appError.code === 'internal_error') {
    req.log.error({ err: appError.cause ?? err }, 'request failed');
  } else if (appError.code === 'service_unavailable' && appError.cause !== undefined) {
    req.log.warn({ err: appError.cause }, 'a dependency is out of reach');
  }
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (appError.code === 'unauthorized') res.setHeader('WWW-Authenticate', 'Bearer');
  if (appError.retryAfter !== undefined) {
    res.setHeader('Retry-After', String(Math.max(1, Math.ceil(appError.retryAfter))));
  }
  res.status(appError.httpStatus).json(toErrorBody(appError));
}

/** Requests that reach no route. */
export function notFound(req: Request, _res: Response, next: NextFunction): void {
  next(new AppError('not_found', `No route for ${req.method} ${req.path}`));
}
