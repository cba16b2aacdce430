import type { RequestHandler } from 'express';
import { z } from 'zod';
import { principalOf } from '../../auth/authenticate';
import { contentTypeFor } from '../../files/content-type';
import type { FilesService } from '../../files/files-service';
import { validate } from '../../http/validate';

export const readFileQuery = z.object({
  sessionId: z.string().min(1),
  path: z.string().min(1),
});

/** GET /v1/files/read (spec 4.7): the raw bytes, typed by the file's extension. */
export function readFile(files: FilesService): RequestHandler {
  return async (req, res) => {
    const { sessionId, path } = validate(readFileQuery, req.query);
    const content = await files.read(principalOf(req), sessionId, path);
    res.status(200);
    res.setHeader('Content-Type', contentTypeFor(path));
    res.setHeader('Content-Length', String(content.length));
    // Never let a browser run what a sandbox wrote, on the API's origin.
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Content-Security-Policy', "sandbox; default-src 'none'");
    res.end(content);
  };
}
