import { z } from 'zod';
import type { IdempotentHandler, OperationHandler, OperationInput } from '../operation-handler';
import { principalOf } from '../../auth/authenticate';
import { isStorableText } from '../../http/storable-json';
import { pathParam } from '../../http/validate';
import type { SnapshotService } from '../../snapshots/snapshot-service';
import type { paginationQuery } from '../sessions/list-sessions';

export const createSnapshotBody = z.strictObject({
  processes: z
    .boolean()
    .optional()
    .describe(
      'keep the running processes too; answered by processesKept (false on nodes that cannot, such as the default runtime)',
    ),
  name: z
    .string()
    .min(1)
    .max(200)
    .refine(isStorableText, 'must not contain NUL bytes or invalid Unicode')
    .optional()
    .describe('a label of your own, at most 200 characters'),
});

/** POST /v1/sessions/:sessionId/snapshots (ADR 44), idempotent under `Idempotency-Key`. */
export function createSnapshot(
  snapshots: SnapshotService,
): IdempotentHandler<OperationInput<z.output<typeof createSnapshotBody>>> {
  return async ({ body }, req) => ({
    status: 201,
    body: await snapshots.take(principalOf(req), pathParam(req.params, 'sessionId'), body),
  });
}

/** GET /v1/snapshots: the caller's snapshots, newest first. */
export function listSnapshots(
  snapshots: SnapshotService,
): OperationHandler<OperationInput<undefined, z.output<typeof paginationQuery>>> {
  return async ({ query: { limit, offset } }, req, res) => {
    const page = await snapshots.list(principalOf(req), limit, offset);
    res.json({
      data: page.data,
      pagination: {
        total: page.total,
        limit,
        offset,
        hasMore: offset + page.data.length < page.total,
      },
    });
  };
}

/** GET /v1/snapshots/:snapshotId */
export function getSnapshot(snapshots: SnapshotService): OperationHandler<OperationInput> {
  return async (_input, req, res) => {
    res.json(await snapshots.get(principalOf(req), pathParam(req.params, 'snapshotId')));
  };
}

/** DELETE /v1/snapshots/:snapshotId: the snapshot and its blob. */
export function deleteSnapshot(snapshots: SnapshotService): OperationHandler<OperationInput> {
  return async (_input, req, res) => {
    const snapshotId = pathParam(req.params, 'snapshotId');
    await snapshots.delete(principalOf(req), snapshotId);
    res.json({ deleted: true, snapshotId });
  };
}
