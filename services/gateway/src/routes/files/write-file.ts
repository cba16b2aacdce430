import { z } from 'zod';
import type { OperationHandler, OperationInput } from '../operation-handler';
import { principalOf } from '../../auth/authenticate';
import { fileInput } from '../../files/file-content';
import type { FilesService } from '../../files/files-service';

export const writeFileBody = fileInput.extend({ sessionId: z.string().min(1) });

/** POST /v1/files/write (spec 4.6) */
export function writeFile(
  files: FilesService,
): OperationHandler<OperationInput<z.output<typeof writeFileBody>>> {
  return async ({ body: { sessionId, ...file } }, req, res) => {
    res.json(await files.write(principalOf(req), sessionId, file));
  };
}
