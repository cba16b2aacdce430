import type { Request, Response } from 'express';
import { toAppError, toErrorBody } from '@sandbox/errors';

/**
 * Server-Sent Events as decisions.md describes them: opened (200, text/event-stream) at the
 * first event, so that what fails before it is an ordinary JSON error; a `: keep-alive`
 * comment after `keepAliveMs` of silence (15 s unless `SSE_KEEP_ALIVE_S` says otherwise); a fault
 * after the start as `event: error`.
 */
export class SseStream {
  private readonly keepAlive: NodeJS.Timeout;
  private awaitingDrain = false;
  private readonly drainWaiters: (() => void)[] = [];

  constructor(
    private readonly req: Request,
    private readonly res: Response,
    keepAliveMs: number,
  ) {
    // After that long in silence (every event restarts the count), a comment keeps proxies
    // from closing the stream.
    this.keepAlive = setInterval(() => {
      if (res.headersSent) res.write(': keep-alive\n\n');
    }, keepAliveMs);
  }

  get opened(): boolean {
    return this.res.headersSent;
  }

  /** A header of the stream, set only while it has not opened. */
  header(name: string, value: string): void {
    if (!this.res.headersSent) this.res.setHeader(name, value);
  }

  open(): void {
    const { res } = this;
    if (res.headersSent) return;
    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream');
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('X-Accel-Buffering', 'no');
    res.flushHeaders();
  }

  /** Writes one event; false when the client's buffer is full (see `onDrain`). */
  send(event: string, data: unknown, id: string): boolean {
    this.open();
    this.keepAlive.refresh();
    return this.res.write(`id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  /** Calls `resume` once the client's buffer drained (one listener for any number of waiters). */
  onDrain(resume: () => void): void {
    this.drainWaiters.push(resume);
    if (this.awaitingDrain) return;
    this.awaitingDrain = true;
    this.res.once('drain', () => {
      this.awaitingDrain = false;
      this.drainWaiters.splice(0).forEach((waiter) => waiter());
    });
  }

  /** A failure: before the stream opened, thrown on (a JSON error); after, an error event. */
  fail(err: unknown, id: string): void {
    if (!this.res.headersSent) throw err;
    const appError = toAppError(err);
    if (appError.code === 'internal_error') this.req.log.error({ err }, 'event stream failed');
    this.send('error', toErrorBody(appError).error, id);
  }

  end(): void {
    clearInterval(this.keepAlive);
    if (this.res.headersSent) this.res.end();
  }
}

/**
 * Aborts when the HTTP client goes away before the response is complete: already aborted for
 * one that left before this was asked (while the request waited on a session's wake).
 */
export function clientGone(req: Request, res: Response): AbortSignal {
  const abort = new AbortController();
  const gone = (): void => {
    if (!res.writableFinished) abort.abort();
  };
  res.on('close', gone);
  req.on('aborted', () => abort.abort());
  if (res.closed || req.socket.destroyed) gone();
  return abort.signal;
}
