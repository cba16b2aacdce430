import type { RequestHandler } from 'express';
import { z } from 'zod';
import { principalOf } from '../../auth/authenticate';
import type { FilesService } from '../../files/files-service';
import { queryInt, validate } from '../../http/validate';

export const listFilesQuery = z.object({
  sessionId: z.string().min(1),
  path: z.string().optional(),
  limit: queryInt(1, 100).optional(),
  offset: queryInt(0, Number.MAX_SAFE_INTEGER).optional(),
});

/**
 * GET /v1/files/list (spec 4.8): every file under `path` (default the root), recursively.
 * With `limit` or `offset` the answer is one page plus a pagination block.
 */
export function listFiles(files: FilesService): RequestHandler {
  return async (req, res) => {
    const query = validate(listFilesQuery, req.query);
    const listing = await files.list(principalOf(req), query.sessionId, query.path);
    const truncated = listing.truncated ? { truncated: true } : {};
    if (query.limit === undefined && query.offset === undefined) {
      res.json({ files: listing.files, ...truncated });
      return;
    }
    const limit = query.limit ?? 50;
    const offset = query.offset ?? 0;
    const page = listing.files.slice(offset, offset + limit);
    const total = listing.files.length;
    res.json({
      files: page,
      ...truncated,
      pagination: { total, limit, offset, hasMore: offset + page.length < total },
    });
  };
}
