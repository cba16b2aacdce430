import type { NextFunction, Request, Response } from 'express';
import { AppError, toAppError, toErrorBody } from '@sandbox/errors';

/** Body-parser failures, recognised by their `type`. */
function fromBodyParser(err: unknown): AppError | undefined {
  if (typeof err !== 'object' || err === null || !('type' in err)) return undefined;
  switch (err.type) {
    case 'entity.parse.failed':
      return new AppError('invalid_request', 'Malformed JSON body', { cause: err });
    case 'entity.too.large':
      return new AppError('payload_too_large', 'Request body too large', { cause: err });
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new AppError('invalid_request', 'Unsupported body encoding', { cause: err });
    default:
      return undefined;
  }
}

/** The one place where errors become HTTP responses (spec part 7). */
export function errorHandler(err: unknown, req: Request, res: Response, _next: NextFunction): void {
  const appError = fromBodyParser(err) ?? toAppError(err);
  if (appError.code === 'internal_error') {
    req.log.error({ err: appError.cause ?? err }, 'request failed');
  }
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (appError.retryAfter !== undefined) {
    res.setHeader('Retry-After', String(Math.max(1, Math.ceil(appError.retryAfter))));
  }
  res.status(appError.httpStatus).json(toErrorBody(appError));
}

/** Requests that reach no route. */
export function notFound(req: Request, _res: Response, next: NextFunction): void {
  next(new AppError('not_found', `No route for ${req.method} ${req.path}`));
}
