import { createParser, type EventSourceMessage } from 'eventsource-parser';

/**
 * The events of a text/event-stream body, one at a time, as the reader asks for them: the
 * body is read no faster than the events are taken (the service's flow control then slows
 * the run down). Leaving the loop early cancels the body, which ends the request.
 */
export async function* serverSentEvents(
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<EventSourceMessage> {
  const ready: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => ready.push(event) });
  const decoder = new TextDecoder();
  const reader = body.getReader();
  try {
    for (;;) {
      while (ready.length > 0) yield ready.shift() as EventSourceMessage;
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
    }
    parser.feed(decoder.decode());
    while (ready.length > 0) yield ready.shift() as EventSourceMessage;
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/**
 * The events of a stream opened again, with `Last-Event-ID`, whenever its connection drops or
 * its body ends before the caller has its last event (the caller leaves the loop then).
 * `open(lastEventId, resumes)` opens it (`resumes` 0: the first time), or says it is over
 * (undefined): the events end. After `maxResumes` reopenings, `exhausted()` is thrown. A read
 * that fails while `aborted()` throws its error.
 */
export async function* resumingEvents(
  open: (lastEventId: string | undefined, resumes: number) => Promise<Response | undefined>,
  options: { maxResumes: number; aborted: () => boolean; exhausted: () => Error },
): AsyncGenerator<EventSourceMessage> {
  let lastEventId: string | undefined;
  for (let resumes = 0; resumes <= options.maxResumes; resumes += 1) {
    const response = await open(lastEventId, resumes);
    if (response?.body === null || response?.body === undefined) return;
    try {
      for await (const message of serverSentEvents(response.body)) {
        if (message.id !== undefined && message.id !== '') lastEventId = message.id;
        yield message;
      }
    } catch (err) {
      if (options.aborted()) throw err;
      // The connection dropped: opened again from the last event.
    }
  }
  throw options.exhausted();
}
