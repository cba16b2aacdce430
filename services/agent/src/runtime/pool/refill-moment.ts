import { setTimeout as sleep } from 'node:timers/promises';
import type { WarmPoolDeps } from './warm-pool-deps';

/** How often a deferred refill looks again for its moment. */
const POLL_MS = 100;

/**
 * Waits for the moment to make a pool member. Making one costs the node more than a second of
 * CPU (dockerd, the container's start, its runner's), which a create served meanwhile shares:
 * - while the pool is not `low`, until the node has served nothing for `settleMs`: not in the
 *   gaps of a burst, nor between creates a second apart;
 * - once it is low, as soon as no request is being served, `maxDeferMs` at most.
 * Resolves at once without `busy` and `quietFor` (nothing to wait for), or when `signal` aborts.
 */
export async function refillMoment(
  { busy, quietFor, settleMs = 1500, maxDeferMs = 1000 }: WarmPoolDeps,
  low: () => boolean,
  signal: AbortSignal,
): Promise<void> {
  let lowSince: number | undefined;
  while (!signal.aborted) {
    if (low()) {
      lowSince ??= Date.now();
      if (busy === undefined || !busy() || Date.now() - lowSince >= maxDeferMs) return;
    } else if (quietFor === undefined || quietFor(settleMs)) {
      return;
    }
    await sleep(POLL_MS, undefined, { signal }).catch(() => undefined);
  }
}
