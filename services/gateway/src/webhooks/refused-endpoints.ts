import type { Logger } from '@sandbox/logger';
import { destinationRefusal, resolveName, type ResolveName } from './destination';
import type { EndpointTarget, WebhookStore } from './webhook-store';

/**
 * Names resolved at once: getaddrinfo runs on libuv's pool of 4 threads, shared with file and
 * crypto work that requests wait on, and a lookup may hold one for the resolver's whole timeout.
 */
const CONCURRENT_CHECKS = 2;

export interface RefusedEndpointsOptions {
  store: Pick<WebhookStore, 'listEnabled' | 'disable'>;
  logger: Logger;
  resolve?: ResolveName;
  /** Aborted when the gateway stops: no endpoint is started on after that. */
  signal?: AbortSignal;
}

/**
 * Endpoints registered before registration refused what it refuses now (issue 40: this host's
 * own addresses, every special-purpose range, names resolving to them) may point where the
 * gateway must not send. Each one not disabled is checked as a registration is, and disabled
 * when refused, with the reason its owner sees. Every replica runs it when it starts, in the
 * background (names take a lookup each); delivery refuses the same addresses meanwhile.
 * Resolves with how many were disabled; a failure is logged, never thrown.
 */
export async function disableRefusedEndpoints({
  store,
  logger,
  resolve = resolveName,
  signal,
}: RefusedEndpointsOptions): Promise<number> {
  let endpoints: EndpointTarget[];
  try {
    endpoints = await store.listEnabled();
  } catch (err) {
    logger.error({ err }, 'webhook endpoints could not be checked');
    return 0;
  }
  let disabled = 0;
  const check = async (endpoint: EndpointTarget): Promise<void> => {
    try {
      const refusal = await destinationRefusal(new URL(endpoint.url), resolve);
      if (refusal === undefined) return;
      const reason = `url refused: ${refusal}`;
      if (await store.disable(endpoint.id, reason)) {
        disabled += 1;
        logger.warn(
          { webhookId: endpoint.id, accountId: endpoint.accountId, reason },
          'webhook endpoint disabled',
        );
      }
    } catch (err) {
      logger.error({ err, webhookId: endpoint.id }, 'webhook endpoint could not be checked');
    }
  };
  const queue = [...endpoints];
  const worker = async (): Promise<void> => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      if (signal?.aborted) return;
      await check(next);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENT_CHECKS }, worker));
  if (disabled > 0) logger.warn({ disabled }, 'webhook endpoints with refused URLs disabled');
  return disabled;
}
