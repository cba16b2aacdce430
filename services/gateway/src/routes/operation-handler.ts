import type { Request, Response } from 'express';
import type { JsonResponse } from '../idempotency/idempotent';

/** An operation's request as the operation table's schemas parsed it (operation-route.ts). */
export interface OperationInput<Body = undefined, Query = undefined> {
  body: Body;
  query: Query;
}

/** Answers one operation, given its validated input. */
export type OperationHandler<I extends OperationInput<unknown, unknown>> = (
  input: I,
  req: Request,
  res: Response,
) => Promise<void>;

/** Produces the response of an idempotent operation, stored under its Idempotency-Key. */
export type IdempotentHandler<I extends OperationInput<unknown, unknown>> = (
  input: I,
  req: Request,
) => Promise<JsonResponse>;
