import { z } from 'zod';
import { intVar, optionalString, serviceConfig, serviceVars } from './env-schema';

const edgeSchema = z
  .object({
    EDGE_HOST: z.string().default('127.0.0.1'),
    EDGE_PORT: intVar(8081, 0, 65535),
    PREVIEW_DOMAIN: z.string().default('preview.localhost'),
    GATEWAY_INTERNAL_URL: z.string().default('http://127.0.0.1:8080'),
    INTERNAL_TOKEN: optionalString(),
    // A lookup may wake a session from deep sleep (a few seconds for a large workspace).
    EDGE_UPSTREAM_TIMEOUT_MS: intVar(10_000, 50),
    EDGE_ROUTE_CACHE_MS: intVar(1000, 0, 60_000),
    ...serviceVars,
  })
  .transform((env) => ({
    host: env.EDGE_HOST,
    port: env.EDGE_PORT,
    previewDomain: env.PREVIEW_DOMAIN.toLowerCase(),
    gatewayInternalUrl: env.GATEWAY_INTERNAL_URL.replace(/\/+$/, ''),
    internalToken: env.INTERNAL_TOKEN,
    upstreamTimeoutMs: env.EDGE_UPSTREAM_TIMEOUT_MS,
    /** How long a looked-up route is reused (0: ask the gateway on every request). */
    routeCacheMs: env.EDGE_ROUTE_CACHE_MS,
  }));

/** The edge proxy's configuration (`loadEdgeProxyConfig(env)`) and every variable it reads. */
export const { load: loadEdgeProxyConfig, envNames: EDGE_PROXY_ENV_NAMES } =
  serviceConfig(edgeSchema);
export type EdgeProxyConfig = ReturnType<typeof loadEdgeProxyConfig>;
