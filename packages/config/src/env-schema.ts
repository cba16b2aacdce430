import { z } from 'zod';
import { AppError } from '@sandbox/errors';

export type Env = Readonly<Record<string, string | undefined>>;

/** An integer environment variable with a default and bounds. */
export const intVar = (fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

/** An optional string variable: unset and empty both mean "absent". */
export const optionalString = () =>
  z
    .string()
    .optional()
    .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

export const logLevel = () =>
  z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info');

/** Parses `env` with `schema`; a bad value is a clear error naming the variable. */
export function parseEnv<S extends z.ZodType>(schema: S, env: Env): Readonly<z.output<S>> {
  const result = schema.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues
      .map((issue) => `${issue.path.join('.')}: ${issue.message}`)
      .join('; ');
    throw new AppError('invalid_request', `Invalid configuration: ${problems}`);
  }
  return Object.freeze(result.data);
}
