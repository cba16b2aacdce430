import { z } from 'zod';
import { AppError } from '@sandbox/errors';

/** Parses `input` with `schema`; a mismatch is 400 invalid_request naming the first bad field. */
export function validate<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue?.path.join('.') ?? '';
  const message = issue === undefined ? 'Invalid request' : issue.message;
  throw new AppError('invalid_request', field === '' ? message : `${field}: ${message}`, {
    details: field === '' ? {} : { field },
  });
}

/** A path parameter the route declares. */
export function pathParam(
  params: Record<string, string | string[] | undefined>,
  name: string,
): string {
  const value = params[name];
  if (typeof value !== 'string' || value === '') {
    throw new AppError('invalid_request', `Missing path parameter ${name}`);
  }
  return value;
}

/**
 * A query-string integer: plain decimal digits only (no hex, exponents or signs). Documented
 * (OpenAPI) as the integer it is.
 */
export function queryInt(min: number, max: number) {
  return z
    .string()
    .regex(/^\d{1,15}$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max))
    .meta({ type: 'integer', minimum: min, maximum: max });
}
