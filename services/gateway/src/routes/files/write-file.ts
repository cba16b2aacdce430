import type { RequestHandler } from 'express';
import { z } from 'zod';
import { principalOf } from '../../auth/authenticate';
import { fileInput } from '../../files/file-content';
import type { FilesService } from '../../files/files-service';
import { validate } from '../../http/validate';

export const writeFileBody = fileInput.extend({ sessionId: z.string().min(1) });

/** POST /v1/files/write (spec 4.6) */
export function writeFile(files: FilesService): RequestHandler {
  return async (req, res) => {
    const { sessionId, ...file } = validate(writeFileBody, req.body ?? {});
    res.json(await files.write(principalOf(req), sessionId, file));
  };
}
