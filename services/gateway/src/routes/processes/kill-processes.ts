import { z } from 'zod';
import type { OperationHandler, OperationInput } from '../operation-handler';
import { principalOf } from '../../auth/authenticate';
import type { ProcessesService } from '../../processes/processes-service';

export const killBody = z.object({
  sessionId: z.string().min(1),
  // Linux pids never pass 2^22; anything past int32 could wrap on its way to the node.
  pid: z.number().int().min(1).max(4_194_304).optional(),
});

/** POST /v1/execution/kill (spec 4.5) */
export function killProcesses(
  processes: ProcessesService,
): OperationHandler<OperationInput<z.output<typeof killBody>>> {
  return async ({ body: { sessionId, pid } }, req, res) => {
    res.json(await processes.kill(principalOf(req), sessionId, pid));
  };
}
