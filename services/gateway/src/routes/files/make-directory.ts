import type { z } from 'zod';
import { fileTarget } from './file-target';
import type { OperationHandler, OperationInput } from '../operation-handler';
import { principalOf } from '../../auth/authenticate';
import type { FilesService } from '../../files/files-service';

export const makeDirectoryBody = fileTarget;

/** POST /v1/files/mkdir (issue 42): a directory and its parents, idempotent. */
export function makeDirectory(
  files: FilesService,
): OperationHandler<OperationInput<z.output<typeof makeDirectoryBody>>> {
  return async ({ body: { sessionId, path } }, req, res) => {
    res.json(await files.mkdir(principalOf(req), sessionId, path));
  };
}
