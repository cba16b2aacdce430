import { z } from 'zod';
import type { OperationHandler, OperationInput } from '../operation-handler';
import { principalOf } from '../../auth/authenticate';
import { pathParam } from '../../http/validate';
import type { TerminalService } from '../../terminals/terminal-service';

const dimension = z.number().int().min(1).max(1000);

export const createTerminalBody = z.strictObject({
  shell: z.string().max(256).optional().describe('absolute path of the program; default /bin/bash'),
  cols: dimension.optional().describe('columns; default 80'),
  rows: dimension.optional().describe('rows; default 24'),
  env: z.record(z.string(), z.string()).optional().describe('besides TERM=xterm-256color'),
  cwd: z.string().optional().describe('relative to /workspace; default /workspace'),
});

/** POST /v1/sessions/:sessionId/terminals (issue 14): a terminal, opened by a WebSocket. */
export function createTerminal(
  terminals: TerminalService,
): OperationHandler<OperationInput<z.output<typeof createTerminalBody>>> {
  return async ({ body }, req, res) => {
    const view = await terminals.create(principalOf(req), pathParam(req.params, 'sessionId'), body);
    res.status(201).json(view);
  };
}
