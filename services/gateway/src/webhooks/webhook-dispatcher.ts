import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { Logger } from '@sandbox/logger';
import type { SecretBox } from '../secrets/secret-box';
import { guardedLookup, isForbiddenAddress } from './destination';
import { signedHeaders } from './signing';
import type { DueDelivery, WebhookStore } from './webhook-store';

export interface WebhookDispatcherOptions {
  store: WebhookStore;
  box: SecretBox;
  logger: Logger;
  pollIntervalMs: number;
  timeoutMs: number;
  retryScheduleS: readonly number[];
  allowPrivateUrls: boolean;
}

/** Deliveries one replica sends at once. */
const BATCH = 20;
/** A receiver's answer is read up to this much, then dropped. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * Sends due deliveries from the outbox. Runs on every gateway replica: rows are claimed with
 * SKIP LOCKED under a lease, so a delivery a dead replica was sending is retried by another.
 */
export class WebhookDispatcher {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private readonly stopping = new AbortController();
  private readonly lookup;
  private passes = 0;

  constructor(private readonly options: WebhookDispatcherOptions) {
    this.lookup = guardedLookup(options.allowPrivateUrls);
  }

  start(): void {
    this.timer = setInterval(() => {
      this.running ??= this.pass()
        .then(() => undefined)
        .catch((err: unknown) => this.options.logger.error({ err }, 'webhook pass failed'))
        .finally(() => {
          this.running = undefined;
        });
    }, this.options.pollIntervalMs);
    this.timer.unref();
  }

  /** Stops polling and abandons deliveries in flight (their leases make them retried). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.stopping.abort();
    await this.running;
  }

  /** Sends what is due; returns how many deliveries were attempted. */
  async pass(): Promise<number> {
    const { store } = this.options;
    if (++this.passes % 1000 === 1) await store.purgeFinished();
    const leaseS = Math.ceil((this.options.timeoutMs * 2) / 1000);
    const due = await store.claimDue(BATCH, leaseS);
    await Promise.all(due.map((delivery) => this.deliver(delivery)));
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
    await store.markAttemptFailed(delivery, error, retryInS);
    logger.warn({ ...log, error, retryInS }, 'webhook delivery failed');
  }

  /** POSTs the payload with Standard Webhooks headers; resolves with the HTTP status. */
  private send(delivery: DueDelivery): Promise<number> {
    const url = new URL(delivery.url);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (!this.options.allowPrivateUrls && isIP(host) !== 0 && isForbiddenAddress(host)) {
      return Promise.reject(new Error('the webhook URL names a forbidden address'));
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
    return new Promise((resolve, reject) => {
      const req = send(
        url,
        {
          method: 'POST',
          headers,
          lookup: this.lookup,
          signal: AbortSignal.any([
            this.stopping.signal,
            AbortSignal.timeout(this.options.timeoutMs),
          ]),
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
    });
  }
}
