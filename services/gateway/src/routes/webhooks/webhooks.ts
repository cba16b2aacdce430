import { z } from 'zod';
import type { OperationHandler, OperationInput } from '../operation-handler';
import { principalOf } from '../../auth/authenticate';
import { pathParam } from '../../http/validate';
import { WEBHOOK_EVENTS } from '../../webhooks/events';
import type { WebhookService } from '../../webhooks/webhook-service';

export const createWebhookBody = z.strictObject({
  url: z.string().describe('http(s) URL that receives the events; must be a public address'),
  events: z
    .array(z.enum(WEBHOOK_EVENTS))
    .min(1)
    .max(WEBHOOK_EVENTS.length * 2),
});

/** POST /v1/webhooks (decisions.md): 201 with the signing secret, shown only this once. */
export function createWebhook(
  webhooks: WebhookService,
): OperationHandler<OperationInput<z.output<typeof createWebhookBody>>> {
  return async ({ body }, req, res) => {
    res.status(201).json(await webhooks.create(principalOf(req), body));
  };
}

/** GET /v1/webhooks */
export function listWebhooks(webhooks: WebhookService): OperationHandler<OperationInput> {
  return async (_input, req, res) => {
    res.json({ data: await webhooks.list(principalOf(req)) });
  };
}

/** DELETE /v1/webhooks/:webhookId: its pending deliveries are dropped too. */
export function deleteWebhook(webhooks: WebhookService): OperationHandler<OperationInput> {
  return async (_input, req, res) => {
    const webhookId = pathParam(req.params, 'webhookId');
    await webhooks.delete(principalOf(req), webhookId);
    res.json({ deleted: true, webhookId });
  };
}
