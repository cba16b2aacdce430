import type { Request, RequestHandler, Response } from 'express';
import type { z } from 'zod';
import { principalOf } from '../auth/authenticate';
import { validate } from '../http/validate';
import { idempotent, type IdempotencyOptions } from '../idempotency/idempotent';
import type {
  IdempotentHandler,
  OperationHandler,
  OperationInput,
} from '../routes/operation-handler';
import type { ApiOperation, OperationName, operations } from './operations';

type Parsed<Op, Part extends 'body' | 'query'> = Op extends {
  [P in Part]: infer S extends z.ZodType;
}
  ? z.output<S>
  : undefined;

/** The input of operation `N`, typed from the table's schemas. */
export type InputOf<N extends OperationName> = OperationInput<
  Parsed<(typeof operations)[N], 'body'>,
  Parsed<(typeof operations)[N], 'query'>
>;

/** The handler operation `N` needs: idempotent operations produce a storable response. */
export type HandlerOf<N extends OperationName> = (typeof operations)[N] extends {
  idempotent: true;
}
  ? IdempotentHandler<InputOf<N>>
  : OperationHandler<InputOf<N>>;

type AnyInput = OperationInput<unknown, unknown>;

/**
 * The one place requests are validated: the body and query of `op` parsed by the schemas the
 * OpenAPI document is generated from, so that the two cannot disagree. A mismatch is 400
 * invalid_request naming the first bad field (http/validate.ts).
 */
export function parseInput(op: ApiOperation, req: Request): AnyInput {
  const body: unknown = req.body ?? {};
  if (op.body !== undefined) op.precheck?.(body, principalOf(req));
  return {
    body: op.body === undefined ? undefined : validate(op.body, body),
    query: op.query === undefined ? undefined : validate(op.query, req.query),
  };
}

/**
 * The express handler of one operation: input validated from the table, then the operation's
 * handler. An idempotent operation validates within its Idempotency-Key handling, after the
 * key's own checks (its shape, its reuse with another request).
 */
export function operationRoute(
  op: ApiOperation,
  // Any operation's handler (its input type is the table's business: see HandlerOf).
  handler: (input: never, req: Request, res: Response) => Promise<unknown>,
  idempotency: IdempotencyOptions,
): RequestHandler {
  if (op.idempotent) {
    const produce = handler as IdempotentHandler<AnyInput>;
    return idempotent(idempotency, (req) => produce(parseInput(op, req), req));
  }
  const answer = handler as OperationHandler<AnyInput>;
  return (req, res) => answer(parseInput(op, req), req, res);
}
