import { AppError } from '@sandbox/errors';
import type { AgentClient } from '../agents/agent-client';
import type { OutputPosition, ProcessRecord } from '../agents/agent-messages';
import { executionResult, MAX_COLLECTED_OUTPUT_BYTES } from '../execute/execute-service';
import type { ExecutionResult } from '../execute/execution-result';
import { OutputBuffer } from '../execute/output-buffer';
import { cellEvents, cellEventsSent, cellMark } from '../execute/cell-events';
import type { Request, Response } from 'express';
import { clientGone, SseStream } from '../http/sse';
import { OutputText, outputEventId, type EventMark } from '../execute/output-text';

/** Where a reader of a run's output stands: a position, or past the run's `exit` event. */
export interface ReplayFrom {
  at: OutputPosition;
  mark?: EventMark;
}

/** How a replay ends: a streamed execute's `exit` and `result`, or the process's `end`. */
export type ReplayEnding = 'result' | 'process';

export interface ReplayTarget {
  agent: AgentClient;
  sessionId: string;
  /** The process id (or a pid). */
  process: string;
}

/** A failure kept in the process's record, as the error the run ended with. */
function failureOf(record: ProcessRecord): AppError {
  const failure = record.failure ?? {
    code: 'service_unavailable',
    message: 'The run was lost',
  };
  const code = failure.code === 'internal_error' ? 'internal_error' : 'service_unavailable';
  return new AppError(code, failure.message, { retryAfter: 1 });
}

/**
 * Sends a run's kept output from `from` as the events of a streamed run (`stdout`, `stderr`;
 * `gap` where the kept output begins past `from`), following it live, at the client's pace:
 * - ending 'result': up to the run's exit, then a cell's `cell_result`/`cell_error`, `exit` and
 *   `result` exactly as the live stream sent them (the result's text is the whole kept output), or `error` for a lost run;
 * - ending 'process': until its output closed (its background's too), then `end` with the
 *   process.
 * Every event's id is where the output stands after it.
 */
export async function replayOutput(
  target: ReplayTarget,
  from: ReplayFrom,
  sse: SseStream,
  ending: ReplayEnding,
  signal: AbortSignal,
  toView: (record: ProcessRecord) => unknown,
): Promise<void> {
  const whole = {
    stdout: new OutputBuffer(MAX_COLLECTED_OUTPUT_BYTES),
    stderr: new OutputBuffer(MAX_COLLECTED_OUTPUT_BYTES),
  };
  const sent = new OutputText(from.at);
  let processId = target.process;
  let last: ProcessRecord | undefined;
  let gapped = false;
  const idNow = (mark?: EventMark): string => outputEventId(processId, sent.at, mark);
  const forResult = ending === 'result';
  await target.agent.readOutput(
    {
      sessionId: target.sessionId,
      process: target.process,
      // The result's text is the whole output: read from the start, send from `from`.
      from: forResult ? { stdout: 0, stderr: 0 } : from.at,
      follow: true,
      untilExit: forResult,
    },
    (event, flow) => {
      if (event.kind === 'process') {
        processId = event.process.id;
        sse.header('X-Process-Id', event.process.id);
        sse.header('X-Process-Pid', String(event.process.pid));
        sse.open();
        return;
      }
      if (event.kind === 'end') {
        last = event.process;
        return;
      }
      if (event.kind === 'gap') {
        gapped = true;
        if (event.at.stdout > sent.at.stdout || event.at.stderr > sent.at.stderr) {
          sent.jump({
            stdout: Math.max(event.at.stdout, sent.at.stdout),
            stderr: Math.max(event.at.stderr, sent.at.stderr),
          });
          sse.send('gap', { type: 'gap', ...sent.at }, idNow());
        }
        return;
      }
      const stream = event.kind;
      whole[stream].push(event.data);
      const start = event.at[stream] - event.data.length;
      const skip = sent.at[stream] - start;
      if (skip >= event.data.length || from.mark !== undefined) return;
      const text = sent.push(stream, event.data.subarray(Math.max(skip, 0)));
      if (text === '' || sse.send(stream, { type: stream, data: text }, idNow())) return;
      flow.pause();
      sse.onDrain(() => flow.resume());
    },
    signal,
  );
  if (last === undefined || signal.aborted) return;
  finishReplay(sse, { sent, whole, gapped, last, from, forResult, idNow }, toView);
}

interface ReplayEnd {
  sent: OutputText;
  whole: { stdout: OutputBuffer; stderr: OutputBuffer };
  gapped: boolean;
  last: ProcessRecord;
  from: ReplayFrom;
  forResult: boolean;
  idNow: (mark?: EventMark) => string;
}

/**
 * After the run's output: what was held back, then `end`, or a cell's values and error (those
 * the reader lacks), `exit` and `result` (or `error`).
 */
function finishReplay(
  sse: SseStream,
  { sent, whole, gapped, last, from, forResult, idNow }: ReplayEnd,
  toView: (record: ProcessRecord) => unknown,
): void {
  for (const stream of ['stdout', 'stderr'] as const) {
    const rest = from.mark === undefined ? sent.flush(stream) : '';
    if (rest !== '') sse.send(stream, { type: stream, data: rest }, idNow());
  }
  if (!forResult) {
    sse.send('end', toView(last), idNow('end'));
    return;
  }
  if (last.result === undefined) {
    sse.fail(failureOf(last), idNow('end'));
    return;
  }
  if (gapped) {
    whole.stdout.truncated = true;
  }
  const result: ExecutionResult = executionResult(last.result, whole.stdout, whole.stderr);
  const sentCells = cellEventsSent(from.mark);
  cellEvents(result).forEach(({ event, data }, at) => {
    if (at >= sentCells) sse.send(event, data, idNow(cellMark(at + 1)));
  });
  if (from.mark !== 'exit')
    sse.send('exit', { type: 'exit', code: result.exitCode }, idNow('exit'));
  sse.send('result', result, idNow('end'));
}

/** A replay as the whole answer to a request: a failure before it opened is a JSON error. */
export async function sendReplay(
  req: Request,
  res: Response,
  target: ReplayTarget,
  from: ReplayFrom,
  ending: ReplayEnding,
  toView: (record: ProcessRecord) => unknown,
  keepAliveMs: number,
): Promise<void> {
  const sse = new SseStream(req, res, keepAliveMs);
  try {
    await replayOutput(target, from, sse, ending, clientGone(req, res), toView);
  } catch (err) {
    sse.fail(err, req.get('Last-Event-ID') ?? '0');
  } finally {
    sse.end();
  }
}
