import { pipeline } from 'node:stream/promises';
import type { z } from 'zod';
import { fileTarget } from './file-target';
import type { OperationHandler, OperationInput } from '../operation-handler';
import { principalOf } from '../../auth/authenticate';
import { contentTypeFor } from '../../files/content-type';
import type { FilesService } from '../../files/files-service';

export const readFileQuery = fileTarget;

/**
 * GET /v1/files/read (spec 4.7): the raw bytes, typed by the file's extension, streamed at
 * the reader's pace (a slow reader holds the read in the sandbox, not bytes in memory).
 */
export function readFile(
  files: FilesService,
): OperationHandler<OperationInput<undefined, z.output<typeof readFileQuery>>> {
  return async ({ query: { sessionId, path } }, req, res) => {
    const file = await files.read(principalOf(req), sessionId, path);
    res.status(200);
    res.setHeader('Content-Type', contentTypeFor(path));
    res.setHeader('Content-Length', String(file.size));
    // More or fewer bytes than announced fail the response instead of corrupting it.
    res.strictContentLength = true;
    // Never let a browser run what a sandbox wrote, on the API's origin.
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Content-Security-Policy', "sandbox; default-src 'none'");
    // A failure after the headers (the node went away) cuts the response short.
    await pipeline(file.body, res).catch((err: unknown) => {
      if ((err as { code?: unknown }).code === 'ERR_STREAM_PREMATURE_CLOSE') return; // reader left
      throw err;
    });
  };
}
