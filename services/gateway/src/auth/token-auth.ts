import type { NextFunction, Request, Response } from 'express';
import { bearerToken, tokenMatches } from '@sandbox/contract';
import { AppError } from '@sandbox/errors';

/**
 * Guards an operator or internal API with a shared token (constant-time compare). Without a
 * configured token the API is off: 404, as if it did not exist.
 */
export function tokenAuth(token: string | undefined, setting: 'ADMIN_TOKEN' | 'INTERNAL_TOKEN') {
  return (req: Request, _res: Response, next: NextFunction): void => {
    if (token === undefined) {
      throw new AppError('not_found', `This API is disabled (no ${setting} configured)`);
    }
    if (!tokenMatches(bearerToken(req.header('authorization')), token)) {
      throw new AppError('unauthorized', 'Invalid token');
    }
    next();
  };
}
