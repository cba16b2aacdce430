import { bearer } from '@sandbox/contract';
import type { Logger } from '@sandbox/logger';

/** What an agent tells the gateways about itself. */
export interface Announcement {
  nodeId: string;
  /** `host:port` of its gRPC service, as the gateways reach it. */
  address: string;
  version: string;
}

/**
 * Announces the node to a gateway (`PUT /internal/v1/nodes/:id`, with the internal token): it
 * joins the registry every gateway replica reads. Repeated (`announceIntervalS`) so that a node
 * whose address changed, or that an operator removed while it still runs, is known again.
 */
export async function announce(
  gatewayUrl: string,
  token: string | undefined,
  node: Announcement,
  fetchImpl: typeof fetch = fetch,
): Promise<void> {
  const response = await fetchImpl(
    new URL(`/internal/v1/nodes/${encodeURIComponent(node.nodeId)}`, gatewayUrl),
    {
      method: 'PUT',
      headers: {
        'content-type': 'application/json',
        ...(token === undefined ? {} : { authorization: bearer(token) }),
      },
      body: JSON.stringify({ address: node.address, version: node.version }),
      signal: AbortSignal.timeout(10_000),
    },
  );
  if (!response.ok) {
    throw new Error(
      `the gateway refused the announcement: ${response.status} ${await response.text()}`,
    );
  }
}

/** Logs an announcement's failure once per run of failures, and its recovery. */
export function announcer(
  gatewayUrl: string,
  token: string | undefined,
  node: Announcement,
  logger: Logger,
): () => Promise<void> {
  let failing = false;
  return async () => {
    try {
      await announce(gatewayUrl, token, node);
      if (failing) logger.info({ gatewayUrl }, 'node announced again');
      failing = false;
    } catch (err) {
      if (!failing) logger.warn({ err, gatewayUrl }, 'announcing the node failed; will retry');
      failing = true;
    }
  };
}
