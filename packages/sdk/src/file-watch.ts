import type { EventSourceMessage } from 'eventsource-parser';
import { errorFromResponse, SandboxError, statusOf } from './errors.js';
import type { HttpClient } from './http.js';
import { eventData } from './run-stream.js';
import { serverSentEvents } from './sse.js';

/** One change a watch saw (ADR 60); every path is relative to /workspace. */
export interface FileChangeEvent {
  type: 'change';
  change: 'create' | 'write' | 'remove' | 'rename';
  /** Of a rename: where the entry went. */
  path: string;
  /** Of a rename: where the entry was. */
  oldPath?: string;
  isDirectory: boolean;
}

/** Changes were lost (too many at once, or a slow reader): list the directory again. */
export interface FileWatchOverflow {
  type: 'overflow';
}

export type FileWatchEvent = FileChangeEvent | FileWatchOverflow;

/**
 * Why a watch's events ended: `closed` (by `close()`, the signal, or leaving the loop),
 * `removed` (the directory went), `stopped` (the session went to deep sleep, was deleted, or
 * its runner restarted: watch again, which wakes it).
 */
export type FileWatchEnd = 'closed' | 'removed' | 'stopped';

export interface WatchOptions {
  /** The directories under it too (10,000 at the most). Default false. */
  recursive?: boolean;
  /** Ends the watch. */
  signal?: AbortSignal;
}

/**
 * A watch of a directory, already in place: changes made after `files.watch` resolved are
 * all seen. Its events are read with `for await`; leaving the loop, `close()` or the signal
 * end it. A watch does not keep the session awake: an idle session pauses under it (nothing
 * in it changes then), and a deep sleep ends it (`ended` = `stopped`). It is not resumed
 * after a dropped connection: watch again and list what may have changed.
 */
export class FileWatch implements AsyncIterable<FileWatchEvent> {
  /** Why the events ended; undefined while they go on. */
  ended: FileWatchEnd | undefined;

  /** @internal Made by `files.watch`. */
  constructor(
    /** How many directories the watch covers. */
    readonly directories: number,
    private readonly events: AsyncGenerator<EventSourceMessage>,
    private readonly controller: AbortController,
    private readonly context: () => { requestId?: string },
  ) {}

  async *[Symbol.asyncIterator](): AsyncGenerator<FileWatchEvent, void, undefined> {
    try {
      for await (const message of this.events) {
        const data = eventData(message);
        if (message.event === 'change') yield data as unknown as FileChangeEvent;
        else if (message.event === 'overflow') yield { type: 'overflow' };
        else if (message.event === 'end') {
          this.ended = data.reason === 'removed' ? 'removed' : 'stopped';
          return;
        } else if (message.event === 'error') {
          throw errorFromResponse(statusOf(data.code), { error: data }, this.context());
        }
      }
      this.ended ??= this.controller.signal.aborted ? 'closed' : 'stopped';
    } catch (err) {
      if (!this.controller.signal.aborted) throw err;
    } finally {
      this.ended ??= 'closed';
      this.controller.abort();
    }
  }

  /** Ends the watch. */
  close(): void {
    this.ended ??= 'closed';
    this.controller.abort();
    void this.events.return(undefined).catch(() => undefined);
  }
}

/** Opens a watch (GET /v1/files/watch) and waits until it is in place. */
export async function openWatch(
  http: HttpClient,
  sessionId: string,
  dir: string | undefined,
  options: WatchOptions,
): Promise<FileWatch> {
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted === true) onAbort();
  const response = await http.send({
    method: 'GET',
    path: '/files/watch',
    query: {
      sessionId,
      path: dir,
      ...(options.recursive === undefined ? {} : { recursive: String(options.recursive) }),
    },
    headers: { accept: 'text/event-stream' },
    signal: controller.signal,
    retry: 'safe',
    stream: true,
  });
  const requestId = response.headers.get('x-request-id') ?? undefined;
  const context = (): { requestId?: string } => (requestId === undefined ? {} : { requestId });
  const events = serverSentEvents(response.body as ReadableStream<Uint8Array>);
  const first = await events.next();
  const data = first.done === true ? undefined : eventData(first.value);
  if (first.done === true || first.value.event !== 'ready' || data === undefined) {
    controller.abort();
    if (first.done !== true && first.value.event === 'error' && data !== undefined) {
      throw errorFromResponse(statusOf(data.code), { error: data }, context());
    }
    throw new SandboxError({
      code: 'invalid_response',
      status: 0,
      message: 'The watch ended before it began',
    });
  }
  return new FileWatch(data.directories as number, events, controller, context);
}
