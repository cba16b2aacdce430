import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { Logger } from '@sandbox/logger';
import type { SecretBox } from '../secrets/secret-box';
import { Periodic } from '@sandbox/contract';
import { addressRefusal, guardedLookup } from './destination';
import { signedHeaders } from './signing';
import type { DueDelivery, WebhookStore } from './webhook-store';

export interface WebhookDispatcherOptions {
  store: WebhookStore;
  box: SecretBox;
  logger: Logger;
  pollIntervalMs: number;
  timeoutMs: number;
  retryScheduleS: readonly number[];
  /** An endpoint failing every delivery for this long is disabled. */
  disableAfterS: number;
  allowPrivateUrls: boolean;
}

/** Deliveries one replica sends at once. */
const MAX_IN_FLIGHT = 32;
/** Deliveries of one account one replica sends at once (one per endpoint). */
const PER_ACCOUNT_IN_FLIGHT = 4;
/** A receiver's answer is read up to this much, then dropped. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * Sends due deliveries from the outbox. Runs on every gateway replica: rows are claimed with
 * SKIP LOCKED under a lease, so a delivery a dead replica was sending is retried by another.
 * Deliveries run as a pool, not in batches, and fairly: one at a time per endpoint and a few
 * per account, so that slow or dead receivers of one account do not hold up the others.
 */
export class WebhookDispatcher {
  private readonly periodic: Periodic;
  private readonly stopping = new AbortController();
  private readonly lookup;
  private passes = 0;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly busyEndpoints = new Map<string, number>();
  private readonly busyAccounts = new Map<string, number>();

  constructor(private readonly options: WebhookDispatcherOptions) {
    this.lookup = guardedLookup(options.allowPrivateUrls);
    this.periodic = new Periodic(
      () => this.pass(),
      options.pollIntervalMs,
      options.logger,
      'webhook pass failed',
    );
  }

  start(): void {
    this.periodic.start();
  }

  /** Stops polling and abandons deliveries in flight (their leases make them retried). */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.periodic.stop();
    await Promise.all(this.inFlight);
  }

  /** Starts the deliveries that are due and fit; returns how many it started. */
  async pass(): Promise<number> {
    const { store } = this.options;
    if (++this.passes % 1000 === 1) await store.purgeFinished();
    const room = MAX_IN_FLIGHT - this.inFlight.size;
    if (room <= 0 || this.stopping.signal.aborted) return 0;
    const due = await store.claimDue({
      batch: room,
      leaseS: Math.ceil((this.options.timeoutMs * 2) / 1000),
      perAccount: PER_ACCOUNT_IN_FLIGHT,
      busyEndpoints: [...this.busyEndpoints.keys()],
      // An account with some in flight gets only what is left of its share.
      busyAccounts: this.busyAccounts,
    });
    for (const delivery of due) {
      count(this.busyEndpoints, delivery.endpointId, 1);
      count(this.busyAccounts, delivery.accountId, 1);
      const sending: Promise<void> = this.deliver(delivery)
        .catch((err: unknown) => this.options.logger.error({ err }, 'webhook delivery crashed'))
        .finally(() => {
          count(this.busyEndpoints, delivery.endpointId, -1);
          count(this.busyAccounts, delivery.accountId, -1);
          this.inFlight.delete(sending);
        });
      this.inFlight.add(sending);
    }
    return due.length;
  }

  private async deliver(delivery: DueDelivery): Promise<void> {
    const { store, logger } = this.options;
    const log = {
      eventId: delivery.eventId,
      webhookId: delivery.endpointId,
      attempt: delivery.attempt,
    };
    let error: string;
    try {
      const status = await this.send(delivery);
      if (status >= 200 && status < 300) {
        await store.markDelivered(delivery);
        logger.info({ ...log, status }, 'webhook delivered');
        return;
      }
      error = `HTTP ${status}`;
    } catch (err) {
      // Abandoned at shutdown: leave the lease to run out, as a crash would.
      if (this.stopping.signal.aborted) return;
      error = err instanceof Error ? err.message : String(err);
    }
    const retryInS = this.options.retryScheduleS[delivery.attempt - 1];
    const disabled = await store.markAttemptFailed(
      delivery,
      error,
      retryInS,
      this.options.disableAfterS,
    );
    logger.warn({ ...log, error, retryInS }, 'webhook delivery failed');
    if (disabled) logger.warn(log, 'webhook endpoint disabled: it failed for too long');
  }

  /** POSTs the payload with Standard Webhooks headers; resolves with the HTTP status. */
  private send(delivery: DueDelivery): Promise<number> {
    const url = new URL(delivery.url);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    // A literal address is connected to without a lookup: `guardedLookup` never sees it.
    const refused =
      this.options.allowPrivateUrls || isIP(host) === 0 ? undefined : addressRefusal(host);
    if (refused !== undefined) {
      return Promise.reject(new Error(`${host} is not a public address (${refused})`));
    }
    const secret = this.options.box.open(delivery.sealedSecret);
    const body = Buffer.from(delivery.payload, 'utf8');
    const headers = {
      ...signedHeaders(secret, delivery.eventId, Math.floor(Date.now() / 1000), delivery.payload),
      'content-type': 'application/json',
      'content-length': String(body.length),
      'user-agent': 'sandbox-webhooks/1',
    };
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    // A timer of our own, held until the request ends (AbortSignal.timeout combined with
    // AbortSignal.any can be collected before it fires on Node 20, leaving requests hanging).
    const abort = new AbortController();
    const timer = setTimeout(
      () => abort.abort(new Error(`no answer within ${this.options.timeoutMs} ms`)),
      this.options.timeoutMs,
    );
    const stop = () => abort.abort(new Error('the dispatcher stopped'));
    this.stopping.signal.addEventListener('abort', stop, { once: true });
    // http.request follows no redirect: a 3xx is an answer like any other (a failure), so a
    // receiver cannot send the gateway on to an address refused here.
    return new Promise<number>((resolve, reject) => {
      const req = send(
        url,
        {
          method: 'POST',
          headers,
          lookup: this.lookup,
          signal: abort.signal,
        },
        (res: IncomingMessage) => {
          let read = 0;
          res.on('data', (chunk: Buffer) => {
            read += chunk.length;
            if (read > MAX_RESPONSE_BYTES) res.destroy();
          });
          res.on('error', () => resolve(res.statusCode ?? 0));
          res.on('close', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', (err) => reject(err));
      req.end(body);
    }).finally(() => {
      clearTimeout(timer);
      this.stopping.signal.removeEventListener('abort', stop);
    });
  }
}

function count(counts: Map<string, number>, key: string, by: 1 | -1): void {
  const next = (counts.get(key) ?? 0) + by;
  if (next <= 0) counts.delete(key);
  else counts.set(key, next);
}
