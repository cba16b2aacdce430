import { z } from 'zod';
import { forkSessionBody } from '../routes/sessions/fork-session';
import { sessionSchema } from './schemas';

export const forkResultSchema = z.strictObject({
  sessions: z.array(sessionSchema).describe('the forks, each as a create answers it'),
  processesKept: z
    .boolean()
    .describe("whether the forks have the source's processes; false: its files only (ADR 43)"),
});

/** The operation table's row of POST /v1/sessions/:sessionId/fork (ADR 43). */
export const forkSessionOperation = {
  method: 'post',
  path: '/sessions/:sessionId/fork',
  summary:
    'Fork a running session into 1 to 10 new sessions, each with a copy-on-write copy of its files, its limits, egress policy and metadata (a sleeping source is woken first)',
  scope: 'sessions',
  body: forkSessionBody,
  idempotent: true,
  success: { status: 201, schema: forkResultSchema, description: 'The forks' },
  errors: [
    'payload_too_large',
    'session_not_found',
    'session_limit_exceeded',
    'request_timeout',
    'service_unavailable',
  ],
} as const;
