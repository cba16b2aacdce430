import { z } from 'zod';
import type { OperationHandler, OperationInput } from '../operation-handler';
import { principalOf } from '../../auth/authenticate';
import type { FilesService } from '../../files/files-service';

export const renameFileBody = z.object({
  sessionId: z.string().min(1),
  from: z.string().min(1),
  to: z.string().min(1),
  overwrite: z
    .boolean()
    .optional()
    .describe('replace an existing file, symlink or empty directory at `to`'),
});

/**
 * POST /v1/files/rename (issue 42): moves a file, directory or symlink (itself), making the
 * destination's parent directories; an existing destination needs `overwrite`.
 */
export function renameFile(
  files: FilesService,
): OperationHandler<OperationInput<z.output<typeof renameFileBody>>> {
  return async ({ body: { sessionId, from, to, overwrite } }, req, res) => {
    res.json(
      await files.rename(principalOf(req), sessionId, {
        from,
        to,
        overwrite: overwrite ?? false,
      }),
    );
  };
}
