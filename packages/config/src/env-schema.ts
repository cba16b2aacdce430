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

/** The items of a comma-separated value, trimmed, the empty ones dropped. */
export function commaList(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/** A comma-separated list variable, empty by default, each item checked by `item`. */
export const listVar = <T extends z.ZodType<unknown, string>>(item: T) =>
  z.string().default('').transform(commaList).pipe(z.array(item));

/**
 * A service's configuration from its schema (which reads `serviceVars` with its own, and whose
 * output names the service's `host`): `load` reads it from `env` (default: the process
 * environment) with the settings every service has (`serviceSettings`); `envNames` are every
 * variable it reads (deployment manifests are checked against them).
 */
export function serviceConfig<S extends z.ZodType<{ host: string }> & { in: { shape: object } }>(
  schema: S,
) {
  const shared = z.object(serviceVars);
  return {
    load: (env: Env = process.env): Readonly<Readonly<z.output<S>> & ServiceSettings> => {
      const own = parseEnv(schema, env);
      return Object.freeze({ ...own, ...serviceSettings(shared.parse(env), own.host) });
    },
    envNames: Object.keys(schema.in.shape) as readonly string[],
  };
}

/** `METRICS_PORT` (absent: no metrics listener), `METRICS_HOST`, `METRICS_TOKEN`. */
const metricsVars = {
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

/** Every service's own variables: its metrics listener's and its log level. */
export const serviceVars = { ...metricsVars, LOG_LEVEL: logLevel() };

export interface MetricsSettings {
  /** Absent: no metrics listener. */
  port: number | undefined;
  host: string;
  /** When set, a scrape must send it as a bearer token. */
  token: string | undefined;
}

export interface ServiceSettings {
  metrics: MetricsSettings;
  logLevel: z.output<ReturnType<typeof logLevel>>;
}

/**
 * What `serviceVars` read: where Prometheus scrapes `/metrics` (a listener of its own, whose
 * host defaults to the service's) and the log level.
 */
export function serviceSettings(
  env: Pick<z.output<z.ZodObject<typeof serviceVars>>, keyof typeof serviceVars>,
  serviceHost: string,
): ServiceSettings {
  return {
    metrics: {
      port: env.METRICS_PORT,
      host: env.METRICS_HOST ?? serviceHost,
      token: env.METRICS_TOKEN,
    },
    logLevel: env.LOG_LEVEL,
  };
}
