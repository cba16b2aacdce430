import { z } from 'zod';
import type { OperationHandler, OperationInput } from '../operation-handler';
import { principalOf } from '../../auth/authenticate';
import type { FilesService } from '../../files/files-service';
import { clientGone, SseStream } from '../../http/sse';

export const watchFilesQuery = z.strictObject({
  sessionId: z.string().min(1),
  path: z
    .string()
    .min(1)
    .optional()
    .describe('the directory, relative to /workspace; default the workspace'),
  recursive: z
    .enum(['true', 'false'])
    .optional()
    .describe('the directories under it too (10,000 at the most); default false'),
});

/**
 * GET /v1/files/watch (ADR 60): a directory's changes as Server-Sent Events: `ready`, then a
 * `change` for each change, `overflow` where changes were lost (list again), and `end` with
 * the reason when the watch ends on the node's side. A refusal comes before the stream, as
 * JSON. A watch does not resume: a new one begins from now.
 */
export function watchFiles(
  files: FilesService,
  { keepAliveMs }: { keepAliveMs: number },
): OperationHandler<OperationInput<undefined, z.output<typeof watchFilesQuery>>> {
  return async ({ query }, req, res) => {
    const stream = new SseStream(req, res, keepAliveMs);
    let sent = 0;
    /** Sends one event; false when the client's buffer is full. */
    const send = (event: string, data: object): boolean => {
      sent += 1;
      return stream.send(event, { type: event, ...data }, String(sent));
    };
    const signal = clientGone(req, res);
    try {
      const reason = await files.watch(
        principalOf(req),
        query.sessionId,
        { path: query.path, recursive: query.recursive === 'true' },
        (event, flow) => {
          let room = true;
          if (event.kind === 'watching') room = send('ready', { directories: event.directories });
          else if (event.kind === 'overflow') room = send('overflow', {});
          else {
            for (const { type, ...change } of event.changes) {
              room = send('change', { change: type, ...change }) && room;
            }
          }
          // A slow client holds the node's side, which drops changes meanwhile (`overflow`).
          if (!room) {
            flow.pause();
            stream.onDrain(() => flow.resume());
          }
        },
        signal,
      );
      // `cancelled` on the node's side with the client still here: the node went away.
      send('end', { reason: reason === 'cancelled' ? 'stopped' : reason });
    } catch (err) {
      if (signal.aborted) return; // the client left: nobody to tell
      stream.fail(err, String(sent + 1));
    } finally {
      stream.end();
    }
  };
}
