import { z } from 'zod';
import { fileTarget } from './file-target';
import type { OperationHandler, OperationInput } from '../operation-handler';
import { principalOf } from '../../auth/authenticate';
import type { FilesService } from '../../files/files-service';

export const removeFileBody = fileTarget.extend({
  recursive: z
    .boolean()
    .optional()
    .describe('remove a directory with everything under it (else only an empty one)'),
});

/**
 * POST /v1/files/remove (issue 42): a file, a symlink (never what it points to) or a
 * directory; a non-empty directory needs `recursive` (409 directory_not_empty).
 */
export function removeFile(
  files: FilesService,
): OperationHandler<OperationInput<z.output<typeof removeFileBody>>> {
  return async ({ body: { sessionId, path, recursive } }, req, res) => {
    const removed = await files.remove(principalOf(req), sessionId, {
      path,
      recursive: recursive ?? false,
    });
    res.json({ removed: true, path: removed.path });
  };
}
