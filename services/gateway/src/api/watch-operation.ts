import { z } from 'zod';
import { FILE_CHANGE_TYPES } from '@sandbox/contract';
import { watchFilesQuery } from '../routes/files/watch-files';

/** The data of a watch's events (ADR 60), each with its event's name as `type`. */
export const fileWatchEventSchema = z
  .discriminatedUnion('type', [
    z
      .strictObject({ type: z.literal('ready'), directories: z.number().int() })
      .describe('the watch began; how many directories it covers'),
    z
      .strictObject({
        type: z.literal('change'),
        change: z.enum(FILE_CHANGE_TYPES),
        path: z.string().describe('relative to /workspace; of a rename, where the entry went'),
        oldPath: z.string().optional().describe('of a rename: where the entry was'),
        isDirectory: z.boolean(),
      })
      .describe('one change'),
    z
      .strictObject({ type: z.literal('overflow') })
      .describe('changes were lost (too many at once, or a slow reader): list again'),
    z
      .strictObject({
        type: z.literal('end'),
        reason: z.enum(['removed', 'stopped']),
      })
      .describe(
        'the last: the directory went (removed), or the session went to deep sleep, was deleted or its runner restarted (stopped)',
      ),
  ])
  .describe(
    'Server-Sent Events: ready, then change… and overflow, until end (or error, data: the error object)',
  );

/** The operation table's row of GET /v1/files/watch (ADR 60). */
export const watchFilesOperation = {
  method: 'get',
  path: '/files/watch',
  summary:
    "Follow a directory's changes as Server-Sent Events (create, write, remove, rename), until the client leaves",
  scope: 'files',
  query: watchFilesQuery,
  success: {
    status: 200,
    schema: fileWatchEventSchema,
    description: 'The changes, as they happen',
    eventStream: fileWatchEventSchema,
    streamOnly: true,
  },
  errors: ['invalid_path', 'session_not_found', 'file_not_found', 'watch_limit_exceeded'],
} as const;
