import { StringDecoder } from 'node:string_decoder';
import type { Request, Response } from 'express';
import type { z } from 'zod';
import { toAppError, toErrorBody } from '@sandbox/errors';
import type { OperationHandler, OperationInput } from '../../api/operation-handler';
import { principalOf } from '../../auth/authenticate';
import type { executeBody } from '../../execute/execute-request';
import {
  timeoutError,
  type ExecuteService,
  type PreparedExecution,
} from '../../execute/execute-service';

const KEEP_ALIVE_MS = 15_000;

/** Aborts when the HTTP client goes away before the response is complete. */
function clientGone(req: Request, res: Response): AbortSignal {
  const abort = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  req.on('aborted', () => abort.abort());
  return abort.signal;
}

/** Server-Sent Events exactly as decisions.md describes. */
async function stream(
  execute: ExecuteService,
  prepared: PreparedExecution,
  req: Request,
  res: Response,
): Promise<void> {
  // The 200 and the stream begin once the run's process started: a request the agent refuses
  // first (a bad path in `files`, a full disk, a gone session) gets an ordinary JSON error.
  const open = (): void => {
    if (res.headersSent) return;
    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream');
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('X-Accel-Buffering', 'no');
    res.flushHeaders();
  };
  let id = 0;
  /** Writes one event; false when the client's buffer is full. */
  const send = (event: string, data: unknown): boolean => {
    open();
    keepAlive.refresh();
    id += 1;
    return res.write(`id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  // After 15 s of silence (every event restarts the count), a comment keeps proxies from
  // closing the stream.
  const keepAlive = setInterval(() => {
    if (res.headersSent) res.write(': keep-alive\n\n');
  }, KEEP_ALIVE_MS);
  const decoders = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') };
  let awaitingDrain = false;
  try {
    const result = await execute.run(prepared, clientGone(req, res), {
      started: open,
      output: (type, data, flow) => {
        const text = decoders[type].write(data);
        if (text === '' || send(type, { type, data: text })) return;
        // A slow reader: stop taking output (back to the process) until the client catches up.
        flow.pause();
        if (awaitingDrain) return;
        awaitingDrain = true;
        res.once('drain', () => {
          awaitingDrain = false;
          flow.resume();
        });
      },
    });
    for (const type of ['stdout', 'stderr'] as const) {
      const rest = decoders[type].end();
      if (rest !== '') send(type, { type, data: rest });
    }
    send('exit', { type: 'exit', code: result.exitCode });
    send('result', result);
  } catch (err) {
    clearInterval(keepAlive);
    if (!res.headersSent) throw err; // to the error handler: an ordinary JSON error
    const appError = toAppError(err);
    if (appError.code === 'internal_error') req.log.error({ err }, 'streamed run failed');
    send('error', toErrorBody(appError).error);
  } finally {
    clearInterval(keepAlive);
    if (res.headersSent) res.end();
  }
}

/** POST /v1/execute (spec 4.4) */
export function executeRoute(
  execute: ExecuteService,
): OperationHandler<OperationInput<z.output<typeof executeBody>>> {
  return async ({ body }, req, res) => {
    const prepared = await execute.prepare(principalOf(req), body);
    if (prepared.plan.stream) {
      await stream(execute, prepared, req, res);
      return;
    }
    const result = await execute.run(prepared, clientGone(req, res));
    if (result.timedOut) throw timeoutError(result, prepared.plan.timeoutS);
    res.json(result);
  };
}
