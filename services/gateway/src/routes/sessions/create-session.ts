import type { RequestHandler } from 'express';
import { z } from 'zod';
import { principalOf } from '../../auth/authenticate';
import { validate } from '../../http/validate';
import { resourceLimitsInput } from '../../sessions/session-limits';
import type { SessionService } from '../../sessions/session-service';

const createSessionBody = z.object({
  ttl: z.number().int().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  resourceLimits: resourceLimitsInput.optional(),
});

/** POST /v1/sessions/create (spec 4.1) */
export function createSession(sessions: SessionService): RequestHandler {
  return async (req, res) => {
    const body = validate(createSessionBody, req.body ?? {});
    res.status(200).json(await sessions.create(principalOf(req), body));
  };
}
