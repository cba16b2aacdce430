import { z } from 'zod';
import type { OperationHandler, OperationInput } from '../operation-handler';
import { principalOf } from '../../auth/authenticate';
import type { FilesService } from '../../files/files-service';

export const statFileQuery = z.object({
  sessionId: z.string().min(1),
  path: z.string().min(1).describe('relative to /workspace; "." for the workspace itself'),
});

/** GET /v1/files/stat (issue 42): what an entry is; a symlink is described, not followed. */
export function statFile(
  files: FilesService,
): OperationHandler<OperationInput<undefined, z.output<typeof statFileQuery>>> {
  return async ({ query: { sessionId, path } }, req, res) => {
    res.json(await files.stat(principalOf(req), sessionId, path));
  };
}
