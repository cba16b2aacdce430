import type { NextFunction, Request, Response } from 'express';
import { bearerToken } from '@sandbox/contract';
import { AppError } from '@sandbox/errors';
import { looksLikeApiKey } from './api-keys';
import type { Principal, Scope } from './principal';

/** What `authenticate` asks of the account store. */
export interface PrincipalLookup {
  /** The principal of an unrevoked key; undefined for any other value. */
  findPrincipal(key: string): Promise<Principal | undefined>;
  /** Records the key's use. */
  touchKey(keyId: string): Promise<void>;
}

/** The API key a request sends, if it has the shape of one; 401 without any. */
export function sentKey(req: Request): string | undefined {
  const key = bearerToken(req.header('authorization'));
  if (key === undefined) {
    throw new AppError('unauthorized', 'Missing API key: send Authorization: Bearer <API_KEY>');
  }
  return looksLikeApiKey(key) ? key : undefined;
}

/** Makes `principal` the request's caller (401 when there is none) and records the key's use. */
export function admitPrincipal(
  req: Request,
  principal: Principal | undefined,
  accounts: Pick<PrincipalLookup, 'touchKey'>,
): asserts principal is Principal {
  if (principal === undefined) throw new AppError('unauthorized', 'Invalid or revoked API key');
  req.principal = principal;
  req.log = req.log.child({ keyId: principal.keyId, accountId: principal.accountId });
  accounts.touchKey(principal.keyId).catch((err: unknown) => {
    req.log.warn({ err }, 'could not record key use');
  });
}

/** Resolves `Authorization: Bearer <API_KEY>` to a principal; 401 otherwise. */
export function authenticate(accounts: PrincipalLookup) {
  return async (req: Request, _res: Response, next: NextFunction): Promise<void> => {
    const key = sentKey(req);
    admitPrincipal(
      req,
      key === undefined ? undefined : await accounts.findPrincipal(key),
      accounts,
    );
    next();
  };
}

/** The authenticated caller; only valid behind `authenticate`. */
export function principalOf(req: Request): Principal {
  if (req.principal === undefined) throw new AppError('unauthorized', 'Not authenticated');
  return req.principal;
}

/** 403 forbidden unless the caller's key has `scope`. */
export function requireScope(scope: Scope) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    if (!principalOf(req).scopes.includes(scope)) {
      throw new AppError('forbidden', `This API key lacks the "${scope}" scope`, {
        details: { scope },
      });
    }
    next();
  };
}
