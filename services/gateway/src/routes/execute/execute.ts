import type { Request, Response } from 'express';
import type { z } from 'zod';
import { AppError } from '@sandbox/errors';
import type { ProcessRef } from '../../agents/agent-messages';
import type { OperationHandler, OperationInput } from '../operation-handler';
import { principalOf } from '../../auth/authenticate';
import type { executeBody } from '../../execute/execute-request';
import {
  timeoutError,
  type ExecuteService,
  type PreparedExecution,
} from '../../execute/execute-service';
import { RunEvents } from '../../execute/run-events';
import { clientGone, SseStream } from '../../http/sse';
import { sendReplay } from '../../processes/output-replay';
import { parseOutputEventId } from '../../execute/output-text';
import type { ProcessesService } from '../../processes/processes-service';

/**
 * Server-Sent Events exactly as decisions.md describes, each event's id saying where the run's
 * output stands after it (`<processId>:<stdout bytes>:<stderr bytes>`), so that a client
 * whose connection dropped resumes with `Last-Event-ID`. The run's process is named in the
 * headers (X-Process-Id, X-Process-Pid) when the stream opens with it running, and by a
 * `started` event (pid and process id) before anything else it sends, for every run whose
 * process started. The client going away does not stop the run.
 */
async function stream(
  execute: ExecuteService,
  prepared: PreparedExecution,
  req: Request,
  res: Response,
  keepAliveMs: number,
): Promise<void> {
  // The 200 and the stream begin once the run started: a request the agent refuses first (a
  // bad path in `files`, a full disk, a gone session) gets an ordinary JSON error.
  const sse = new SseStream(req, res, keepAliveMs);
  const events = new RunEvents((event, data, id) => sse.send(event, data, id));
  /** The run's process, in the stream's headers when it is known as the stream opens. */
  const announce = (ref: ProcessRef): void => {
    sse.header('X-Process-Id', ref.id);
    sse.header('X-Process-Pid', String(ref.pid));
  };
  try {
    const result = await execute.run(prepared, clientGone(req, res), {
      started: (started) => {
        if (started !== undefined) announce(started);
        sse.open();
        if (started !== undefined) events.started(started);
      },
      output: (type, data, flow, mark) => {
        if (mark !== undefined) announce(mark.process);
        if (events.output(type, data, mark)) return;
        // A slow reader: stop taking output (back to the process) until the client catches up.
        flow.pause();
        sse.onDrain(() => flow.resume());
      },
    });
    events.finish(result);
  } catch (err) {
    sse.fail(err, events.lastId());
  } finally {
    sse.end();
  }
}

/**
 * A streamed run's reconnect: `Last-Event-ID` names the run and where the client's copy
 * ends; the rest of the run's events follow, live if it still runs. After the last event
 * (`result`), 204: nothing more will come.
 */
async function resume(
  processes: ProcessesService,
  lastEventId: string,
  sessionId: string,
  req: Request,
  res: Response,
  keepAliveMs: number,
): Promise<void> {
  const from = parseOutputEventId(lastEventId);
  const target = await processes.locate(principalOf(req), sessionId, from.processId);
  if (from.mark === 'end') {
    res.status(204).end();
    return;
  }
  await sendReplay(req, res, target, from, 'result', () => undefined, keepAliveMs);
}

/** POST /v1/execute (spec 4.4) */
export function executeRoute(
  execute: ExecuteService,
  processes: ProcessesService,
  { keepAliveMs }: { keepAliveMs: number },
): OperationHandler<OperationInput<z.output<typeof executeBody>>> {
  return async ({ body }, req, res) => {
    const lastEventId = req.get('Last-Event-ID');
    if (lastEventId !== undefined) {
      if (body.stream !== true) {
        throw new AppError(
          'invalid_request',
          'Last-Event-ID resumes a streamed run: send stream: true',
          {
            details: { field: 'stream' },
          },
        );
      }
      await resume(processes, lastEventId, body.sessionId, req, res, keepAliveMs);
      return;
    }
    const prepared = await execute.prepare(principalOf(req), body);
    if (prepared.spec.stream) {
      await stream(execute, prepared, req, res, keepAliveMs);
      return;
    }
    const result = await execute.run(prepared, clientGone(req, res));
    if (result.timedOut) throw timeoutError(result, prepared.spec.timeoutS);
    res.json(result);
  };
}
