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

/** The one place where errors become HTTP responses (spec part 7). */
export function errorHandler(err: unknown, req: Request, res: Response, _next: NextFunction): void {
  const appError = fromExpress(err) ?? toAppError(err);
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
