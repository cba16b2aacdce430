import { EventEmitter } from 'node:events';
import * as grpc from '@grpc/grpc-js';
import { createLogger } from '@sandbox/logger';
import { streaming } from './call-handlers';

/** A server-streaming call as grpc-js hands it to a handler, recording what is sent. */
function fakeCall(): grpc.ServerWritableStream<object, string> & { sent: string[] } {
  const call = Object.assign(new EventEmitter(), {
    request: {},
    metadata: new grpc.Metadata(),
    cancelled: false,
    sent: [] as string[],
    write(message: string) {
      call.sent.push(message);
      return true;
    },
    end() {
      call.sent.push('(end)');
      // As grpc-js 1.14 does once a call's status is sent, whatever it was.
      setImmediate(() => call.emit('cancelled'));
    },
  });
  return call as unknown as grpc.ServerWritableStream<object, string> & { sent: string[] };
}

const context = {
  logger: createLogger({ name: 'test', level: 'silent' }),
  internalToken: undefined,
};

/** A handler whose work waits for `finish`, and the signal it was given. */
function handlerWithWork() {
  let signal: AbortSignal | undefined;
  let finish: (last: string) => void = () => undefined;
  const handler = streaming<object, string>(
    context,
    'Test',
    (_stream, chunk) => chunk.toString(),
    (_request, _sink, given) => {
      signal = given;
      return new Promise((resolve) => (finish = resolve));
    },
  );
  return { handler, signal: () => signal, finish: (last: string) => finish(last) };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('streaming', () => {
  it('aborts the work when its caller goes away while it runs', async () => {
    const { handler, signal, finish } = handlerWithWork();
    const call = fakeCall();
    handler(call);
    await turn();
    call.cancelled = true;
    call.emit('cancelled');
    expect(signal()?.aborted).toBe(true);
    finish('late');
    await turn();
    expect(call.sent).toEqual([]);
  });

  it('aborts nothing for the `cancelled` grpc-js says after a call that ended', async () => {
    const { handler, signal, finish } = handlerWithWork();
    const call = fakeCall();
    handler(call);
    await turn();
    finish('last');
    await turn();
    await turn();
    expect(call.sent).toEqual(['last', '(end)']);
    expect(call.listenerCount('cancelled')).toBeGreaterThan(0);
    expect(signal()?.aborted).toBe(false);
  });
});
