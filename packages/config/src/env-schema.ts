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

/** `METRICS_PORT` (absent: no metrics listener), `METRICS_HOST`, `METRICS_TOKEN`: every service's. */
export const metricsVars = {
  METRICS_PORT: optionalString().pipe(
    z
      .string()
      .regex(/^\d{1,5}$/, 'must be a port number')
      .transform(Number)
      .pipe(z.number().int().max(65535))
      .optional(),
  ),
  METRICS_HOST: optionalString(),
  METRICS_TOKEN: optionalString(),
};

export interface MetricsSettings {
  /** Absent: no metrics listener. */
  port: number | undefined;
  host: string;
  /** When set, a scrape must send it as a bearer token. */
  token: string | undefined;
}

/** The metrics listener's settings; its host defaults to the service's own. */
export function metricsSettings(
  env: {
    METRICS_PORT?: number | undefined;
    METRICS_HOST?: string | undefined;
    METRICS_TOKEN?: string | undefined;
  },
  serviceHost: string,
): MetricsSettings {
  return {
    port: env.METRICS_PORT,
    host: env.METRICS_HOST ?? serviceHost,
    token: env.METRICS_TOKEN,
  };
}
