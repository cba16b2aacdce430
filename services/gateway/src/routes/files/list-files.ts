import { z } from 'zod';
import type { OperationHandler, OperationInput } from '../operation-handler';
import { principalOf } from '../../auth/authenticate';
import { MAX_LIST_ENTRIES, type FilesService } from '../../files/files-service';
import { queryInt } from '../../http/validate';

export const listFilesQuery = z.object({
  sessionId: z.string().min(1),
  path: z.string().optional(),
  limit: queryInt(1, 100).optional(),
  offset: queryInt(0, Number.MAX_SAFE_INTEGER).optional(),
});

/**
 * GET /v1/files/list (spec 4.8): every file under `path` (default the root), recursively, at
 * most MAX_LIST_ENTRIES (`truncated` past that). With `limit` or `offset` the answer is one
 * page of them all plus a pagination block.
 */
export function listFiles(
  files: FilesService,
): OperationHandler<OperationInput<undefined, z.output<typeof listFilesQuery>>> {
  return async ({ query }, req, res) => {
    const paginated = query.limit !== undefined || query.offset !== undefined;
    const limit = paginated ? (query.limit ?? 50) : MAX_LIST_ENTRIES;
    const offset = query.offset ?? 0;
    const listing = await files.list(principalOf(req), query.sessionId, query.path, {
      offset,
      limit,
    });
    if (!paginated) {
      const cut = listing.truncated || listing.total > listing.files.length;
      res.json({ files: listing.files, ...(cut ? { truncated: true } : {}) });
      return;
    }
    const { total } = listing;
    res.json({
      files: listing.files,
      ...(listing.truncated ? { truncated: true } : {}),
      pagination: { total, limit, offset, hasMore: offset + listing.files.length < total },
    });
  };
}
