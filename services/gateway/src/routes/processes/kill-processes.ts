import type { RequestHandler } from 'express';
import { z } from 'zod';
import { principalOf } from '../../auth/authenticate';
import { validate } from '../../http/validate';
import type { ProcessesService } from '../../processes/processes-service';

export const killBody = z.object({
  sessionId: z.string().min(1),
  // Linux pids never pass 2^22; anything past int32 could wrap on its way to the node.
  pid: z.number().int().min(1).max(4_194_304).optional(),
});

/** POST /v1/execution/kill (spec 4.5) */
export function killProcesses(processes: ProcessesService): RequestHandler {
  return async (req, res) => {
    const { sessionId, pid } = validate(killBody, req.body ?? {});
    res.json(await processes.kill(principalOf(req), sessionId, pid));
  };
}
