import type { Request } from 'express';
import { z } from 'zod';
import { AppError } from '@sandbox/errors';
import type { OperationHandler, OperationInput } from '../operation-handler';
import { principalOf } from '../../auth/authenticate';
import { pathParam } from '../../http/validate';
import { sendReplay, type ReplayFrom } from '../../processes/output-replay';
import { parseOutputEventId } from '../../execute/output-text';
import { toProcessView, type ProcessesService } from '../../processes/processes-service';

/** Bytes one stdin request carries at the most. */
export const MAX_STDIN_BYTES = 1024 * 1024;

const offset = z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

export const outputQuery = z.strictObject({
  stdoutOffset: offset.optional().describe('stdout bytes to skip; default 0'),
  stderrOffset: offset.optional().describe('stderr bytes to skip; default 0'),
});

export const stdinBody = z.strictObject({
  data: z
    .string()
    .max(2 * MAX_STDIN_BYTES)
    .optional()
    .describe('bytes for the process, 1 MiB at the most (text, or base64 with encoding)'),
  encoding: z.enum(['utf8', 'base64']).optional().describe('of data; default utf8'),
  close: z.boolean().optional().describe('close the stdin after data (the process sees EOF)'),
});

/** The `{pid}` of a path: a pid or a process id (`proc_…`). */
function processRef(req: Request): string {
  const ref = pathParam(req.params, 'pid');
  if (!/^(\d{1,7}|proc_[a-f0-9]{16})$/.test(ref)) {
    throw new AppError('invalid_request', 'pid must be a pid or a process id (proc_…)', {
      details: { field: 'pid' },
    });
  }
  return ref;
}

/** GET /v1/sessions/:sessionId/processes */
export function listProcesses(processes: ProcessesService): OperationHandler<OperationInput> {
  return async (_input, req, res) => {
    const list = await processes.list(principalOf(req), pathParam(req.params, 'sessionId'));
    res.json({ processes: list });
  };
}

/** GET /v1/sessions/:sessionId/processes/:pid */
export function getProcess(processes: ProcessesService): OperationHandler<OperationInput> {
  return async (_input, req, res) => {
    res.json(
      await processes.get(principalOf(req), pathParam(req.params, 'sessionId'), processRef(req)),
    );
  };
}

/** Where a read of the output begins: `Last-Event-ID` (an event stream's reconnect), or the query. */
function startOf(req: Request, query: z.output<typeof outputQuery>): ReplayFrom {
  const lastEventId = req.get('Last-Event-ID');
  if (lastEventId !== undefined) {
    const parsed = parseOutputEventId(lastEventId);
    return { at: parsed.at, ...(parsed.mark === undefined ? {} : { mark: parsed.mark }) };
  }
  return { at: { stdout: query.stdoutOffset ?? 0, stderr: query.stderrOffset ?? 0 } };
}

/**
 * GET /v1/sessions/:sessionId/processes/:pid/output: the kept output as JSON, or, asked with
 * `Accept: text/event-stream`, as events that follow it live until the run and what it left
 * running let go of its pipes (`end`, with the process).
 */
export function processOutput(
  processes: ProcessesService,
  { keepAliveMs }: { keepAliveMs: number },
): OperationHandler<OperationInput<unknown, z.output<typeof outputQuery>>> {
  return async ({ query }, req, res) => {
    const sessionId = pathParam(req.params, 'sessionId');
    const ref = processRef(req);
    const from = startOf(req, query);
    if (!(req.get('Accept') ?? '').includes('text/event-stream')) {
      res.json(await processes.output(principalOf(req), sessionId, ref, from.at));
      return;
    }
    const target = await processes.locate(principalOf(req), sessionId, ref);
    if (from.mark === 'end') {
      res.status(204).end(); // the stream was complete: an EventSource stops reconnecting
      return;
    }
    await sendReplay(req, res, target, from, 'process', toProcessView, keepAliveMs);
  };
}

/** POST /v1/sessions/:sessionId/processes/:pid/stdin */
export function writeStdin(
  processes: ProcessesService,
): OperationHandler<OperationInput<z.output<typeof stdinBody>>> {
  return async ({ body }, req, res) => {
    const data = Buffer.from(body.data ?? '', body.encoding === 'base64' ? 'base64' : 'utf8');
    if (data.length > MAX_STDIN_BYTES) {
      throw new AppError(
        'payload_too_large',
        `stdin takes ${MAX_STDIN_BYTES} bytes per request at the most`,
        {
          details: { field: 'data', max: MAX_STDIN_BYTES },
        },
      );
    }
    if (data.length === 0 && body.close !== true) {
      throw new AppError('invalid_request', 'Send data, close, or both', {
        details: { field: 'data' },
      });
    }
    res.json(
      await processes.writeStdin(
        principalOf(req),
        pathParam(req.params, 'sessionId'),
        processRef(req),
        {
          data,
          close: body.close === true,
        },
      ),
    );
  };
}
