import { EventEmitter } from 'node:events';
import type * as grpc from '@grpc/grpc-js';
import { AppError } from '@sandbox/errors';
import type { ExecEvent__Output } from '@sandbox/proto';
import type { ExecEvent } from './agent-messages';
import { followExec } from './agent-streams';

/** A call as grpc-js gives it: its messages, status and end are the test's to emit. */
class FakeCall extends EventEmitter {
  cancelled = 0;
  cancel(): void {
    this.cancelled += 1;
  }
  pause(): void {}
  resume(): void {}
}

const result = {
  exitCode: 0,
  executionTimeMs: 1,
  memoryUsedBytes: 2,
  cpuTimeMs: 0,
  timedOut: false,
  filesWritten: [],
  limitsExceeded: [],
  process: { id: 'proc_1', pid: 7 },
  cell: null,
};

/** Follows a fake call: its events as taken, and the promise's state as of now. */
function following(signal = new AbortController().signal) {
  const call = new FakeCall();
  const events: ExecEvent['kind'][] = [];
  let state: 'pending' | 'resolved' | AppError = 'pending';
  const done = followExec(
    () => call as unknown as grpc.ClientReadableStream<ExecEvent__Output>,
    { onEvent: (event) => events.push(event.kind) },
    signal,
  ).then(
    () => (state = 'resolved'),
    (err: AppError) => (state = err),
  );
  /** The promise's state once its callbacks had their turn. */
  const settled = async () => {
    await new Promise((resolve) => setImmediate(resolve));
    return state;
  };
  return { call, events, done, settled };
}

const unavailable = Object.assign(new Error('14 UNAVAILABLE: Connection dropped'), {
  code: 14,
  details: 'Connection dropped',
  metadata: undefined,
});

describe('followExec', () => {
  it("resolves with the run's result, without waiting for the call's status", async () => {
    const { call, events, settled } = following();
    call.emit('data', { started: { process: null } });
    expect(await settled()).toBe('pending');
    call.emit('data', { result });
    expect(await settled()).toBe('resolved');
    // Nothing follows a result; were anything to, the answer is already on its way.
    call.emit('data', { stdout: { data: Buffer.from('late'), at: null, process: null } });
    expect(events).toEqual(['started', 'result']);
  });

  it('takes a failure after the result as moot, and cancels nothing once it is in', async () => {
    const abort = new AbortController();
    const { call, settled } = following(abort.signal);
    call.emit('data', { result });
    abort.abort();
    // Without a listener, an 'error' event would throw here.
    call.emit('error', unavailable);
    expect(await settled()).toBe('resolved');
    expect(call.cancelled).toBe(0);
  });

  it('fails with the call when it fails before the result', async () => {
    const { call, settled } = following();
    call.emit('data', { started: { process: null } });
    call.emit('error', unavailable);
    const state = await settled();
    expect(state).toBeInstanceOf(AppError);
    expect((state as AppError).code).toBe('service_unavailable');
  });

  it('cancels the call when the signal aborts before the result (408)', async () => {
    const abort = new AbortController();
    const { call, settled } = following(abort.signal);
    abort.abort();
    expect(call.cancelled).toBe(1);
    call.emit('error', Object.assign(new Error('1 CANCELLED'), { code: 1, details: '' }));
    expect((await settled()) as AppError).toMatchObject({
      code: 'request_timeout',
      message: 'Run cancelled',
    });
  });

  it('opens no call when the signal aborted before (408)', async () => {
    const abort = new AbortController();
    abort.abort();
    let opened = 0;
    const done = followExec(
      () => {
        opened += 1;
        return new FakeCall() as unknown as grpc.ClientReadableStream<ExecEvent__Output>;
      },
      { onEvent: () => undefined },
      abort.signal,
    );
    await expect(done).rejects.toMatchObject({ code: 'request_timeout' });
    expect(opened).toBe(0);
  });

  it('resolves when a stream ends without a result (the caller then says what is missing)', async () => {
    const { call, settled } = following();
    call.emit('end');
    expect(await settled()).toBe('resolved');
  });
});
