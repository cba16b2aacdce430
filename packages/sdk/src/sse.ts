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
