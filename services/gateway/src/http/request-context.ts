import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { REQUEST_ID } from '@sandbox/contract';
import { withRequestId, type Logger } from '@sandbox/logger';
import type { Principal } from '../auth/principal';

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

/** A request's id: the caller's `X-Request-Id` when sane (printable, short), else a new one. */
export function requestIdOf(sent: string | undefined): string {
  return sent !== undefined && REQUEST_ID.test(sent) ? sent : randomUUID();
}

/**
 * Gives each request an id (the caller's `X-Request-Id` when sane) and serves it within that
 * id's scope: every line logged for it, here and on the agents its calls reach (the id goes
 * in their metadata), carries the id.
 */
export function requestContext(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    req.id = requestIdOf(req.header('x-request-id'));
    res.setHeader('X-Request-Id', req.id);
    req.log = logger;
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      req.log.info(
        {
          requestId: req.id,
          method: req.method,
          // The whole path (a router's req.path is its own part); never the query (tokens).
          path: req.originalUrl.split('?')[0],
          status: res.statusCode,
          ms: Number((process.hrtime.bigint() - started) / 1_000_000n),
        },
        'request',
      );
    });
    withRequestId(req.id, next);
  };
}
