import { createHash, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { AppError } from '@sandbox/errors';

const digest = (value: string): Buffer => createHash('sha256').update(value).digest();

/** Guards the admin API with the operator's token (constant-time compare). */
export function adminAuth(adminToken: string | undefined) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    if (adminToken === undefined) {
      throw new AppError('not_found', 'The admin API is disabled (no ADMIN_TOKEN configured)');
    }
    const sent = /^Bearer\s+(\S+)\s*$/i.exec(req.header('authorization') ?? '')?.[1] ?? '';
    if (!timingSafeEqual(digest(sent), digest(adminToken))) {
      throw new AppError('unauthorized', 'Invalid admin token');
    }
    next();
  };
}
