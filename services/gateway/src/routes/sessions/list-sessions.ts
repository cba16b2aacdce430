import { z } from 'zod';
import type { OperationHandler, OperationInput } from '../operation-handler';
import { principalOf } from '../../auth/authenticate';
import { queryInt } from '../../http/validate';
import type { SessionService } from '../../sessions/session-service';
import type { SessionStore } from '../../sessions/session-store';

export const paginationQuery = z.object({
  limit: queryInt(1, 100).default(50),
  offset: queryInt(0, Number.MAX_SAFE_INTEGER).default(0),
});

/** GET /v1/sessions: the caller's sessions, newest first (decisions.md). */
export function listSessions(
  store: SessionStore,
  sessions: SessionService,
): OperationHandler<OperationInput<undefined, z.output<typeof paginationQuery>>> {
  return async ({ query: { limit, offset } }, req, res) => {
    const { accountId } = principalOf(req);
    const page = await store.list({ accountId, limit, offset });
    res.json({
      data: page.rows.map((record) => ({
        ...sessions.view(record),
        lastActive: record.lastActiveAt.toISOString(),
        state: record.state,
        metadata: record.metadata,
      })),
      pagination: {
        total: page.total,
        limit,
        offset,
        hasMore: offset + page.rows.length < page.total,
      },
    });
  };
}
