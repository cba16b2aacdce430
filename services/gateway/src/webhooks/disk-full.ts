import { AppError } from '@sandbox/errors';
import type { Logger } from '@sandbox/logger';
import type { WebhookStore } from './webhook-store';

/**
 * Runs `work`; when it fails with disk_full (507), records a resource_limit.exceeded event
 * before passing the error on.
 */
export async function announcingDiskFull<T>(
  webhooks: WebhookStore,
  logger: Logger,
  session: { accountId: string; id: string; diskMb: number },
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof AppError && err.code === 'disk_full') {
      await webhooks
        .enqueue(session.accountId, 'resource_limit.exceeded', {
          sessionId: session.id,
          limit: 'disk',
          max: session.diskMb,
        })
        .catch((enqueueErr: unknown) =>
          logger.error({ err: enqueueErr, sessionId: session.id }, 'could not record an event'),
        );
    }
    throw err;
  }
}
