import { AppError } from '@sandbox/errors';
import { randomString } from '../auth/api-keys';
import type { Principal } from '../auth/principal';
import type { SecretBox } from '../secrets/secret-box';
import { checkWebhookUrl } from './destination';
import { WEBHOOK_ID_PATTERN, type WebhookEvent } from './events';
import { newWebhookSecret } from './signing';
import {
  FAILED_TOO_LONG,
  webhookNotFound,
  type WebhookEndpoint,
  type WebhookStore,
} from './webhook-store';

export interface WebhookView {
  id: string;
  url: string;
  events: WebhookEvent[];
  createdAt: string;
  disabled: boolean;
  /** Present only when disabled. */
  disabledReason?: string;
}

const view = (endpoint: WebhookEndpoint): WebhookView => ({
  id: endpoint.id,
  url: endpoint.url,
  events: endpoint.events,
  createdAt: endpoint.createdAt.toISOString(),
  disabled: endpoint.disabledAt !== null,
  // Without a reason, a replica of the release before disabled it, for its failures.
  ...(endpoint.disabledAt === null
    ? {}
    : { disabledReason: endpoint.disabledReason ?? FAILED_TOO_LONG }),
});

/** Registration of webhook endpoints; the signing secret is shown once, stored sealed. */
export class WebhookService {
  constructor(
    private readonly store: WebhookStore,
    /** Absent when no SECRETS_KEY is configured: webhooks cannot be registered then. */
    private readonly box: SecretBox | undefined,
    private readonly allowPrivateUrls: boolean,
  ) {}

  async create(
    principal: Principal,
    input: { url: string; events: WebhookEvent[] },
  ): Promise<WebhookView & { secret: string }> {
    // Its literal address, or every address its name resolves to now (delivery checks again).
    const url = await checkWebhookUrl(input.url, this.allowPrivateUrls);
    if (this.box === undefined) {
      throw new AppError('service_unavailable', 'Webhooks are not configured on this service', {
        retryAfter: 60,
      });
    }
    const secret = newWebhookSecret();
    const endpoint = await this.store.create(principal.accountId, {
      id: 'wh_' + randomString(24, 'abcdefghijklmnopqrstuvwxyz0123456789'),
      url: url.href,
      events: [...new Set(input.events)],
      sealedSecret: this.box.seal(secret),
    });
    return { ...view(endpoint), secret };
  }

  async list(principal: Principal): Promise<WebhookView[]> {
    return (await this.store.list(principal.accountId)).map(view);
  }

  async delete(principal: Principal, webhookId: string): Promise<void> {
    if (
      !WEBHOOK_ID_PATTERN.test(webhookId) ||
      !(await this.store.delete(principal.accountId, webhookId))
    ) {
      throw webhookNotFound(webhookId);
    }
  }
}
