import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '@sandbox/logger';
import type { Principal } from '../auth/principal';

/** Echoed when printable ASCII and not too long; anything else gets a fresh id. */
const REQUEST_ID = /^[\x20-\x7e]{1,200}$/;

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      id: string;
      log: Logger;
      principal?: Principal;
    }
  }
}

/** A request's id: the caller's `X-Request-Id` when sane, else a new one. */
export function requestIdOf(sent: string | undefined): string {
  return sent !== undefined && REQUEST_ID.test(sent) ? sent : randomUUID();
}

/** Gives each request an id (the caller's `X-Request-Id` when sane) and a child logger. */
export function requestContext(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    req.id = requestIdOf(req.header('x-request-id'));
    res.setHeader('X-Request-Id', req.id);
    req.log = logger.child({ requestId: req.id });
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      req.log.info(
        {
          method: req.method,
          path: req.path,
          status: res.statusCode,
          ms: Number((process.hrtime.bigint() - started) / 1_000_000n),
        },
        'request',
      );
    });
    next();
  };
}
