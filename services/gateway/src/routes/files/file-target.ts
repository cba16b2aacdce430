import { z } from 'zod';

/** A path in a session's /workspace: what most file operations name. */
export const fileTarget = z.object({
  sessionId: z.string().min(1),
  path: z.string().min(1),
});
