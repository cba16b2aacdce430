import { PassThrough, Readable, Writable } from 'node:stream';
import { OutputChannel, type Flow } from './output-channel';
import { RunnerError, type RunnerEvent } from './protocol';

/** A channel over an output of `highWaterMark` bytes, and the events written to it. */
function channelOver(highWaterMark = 16 * 1024) {
  const output = new PassThrough({ highWaterMark });
  const channel = new OutputChannel(output);
  /** What was written, once this turn's events went out. */
  const events = async (): Promise<RunnerEvent[]> => {
    await new Promise(setImmediate);
    return String(output.read() ?? '')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as RunnerEvent);
  };
  return { output, channel, events };
}

describe('OutputChannel', () => {
  it('sends a RunnerError as its code, message and details', async () => {
    const { channel, events } = channelOver();
    await channel.fail(3, new RunnerError('file_not_found', 'No file a', { path: 'a' }));
    expect(await events()).toEqual([
      { id: 3, ev: 'error', code: 'file_not_found', message: 'No file a', details: { path: 'a' } },
    ]);
  });

  it('sends any other failure as internal_error', async () => {
    const { channel, events } = channelOver();
    await channel.fail(4, new Error('boom'));
    await channel.fail(5, 'odd');
    expect(await events()).toEqual([
      { id: 4, ev: 'error', code: 'internal_error', message: 'boom' },
      { id: 5, ev: 'error', code: 'internal_error', message: 'odd' },
    ]);
  });

  it('sends the events of one turn of the event loop in one write', async () => {
    const writes: string[] = [];
    const output = new Writable({
      write(chunk: Buffer, _encoding, done) {
        writes.push(chunk.toString());
        done();
      },
      writev(chunks, done) {
        writes.push(chunks.map(({ chunk }) => String(chunk)).join(''));
        done();
      },
    });
    const channel = new OutputChannel(output);
    channel.emit({ id: 1, ev: 'started', pid: 5 });
    channel.emit({ id: 1, ev: 'exec' });
    expect(writes).toEqual([]); // held until the turn ends
    await new Promise(setImmediate);
    channel.emit({ id: 2, ev: 'exec' });
    await new Promise(setImmediate);
    expect(writes).toEqual([
      '{"id":1,"ev":"started","pid":5}\n{"id":1,"ev":"exec"}\n',
      '{"id":2,"ev":"exec"}\n',
    ]);
  });
});

describe('OutputChannel streams', () => {
  it('sends a stream as chunks and counts its bytes', async () => {
    const { channel, events } = channelOver();
    const flows = new Map<number, Flow>();
    const sent = channel.sendWithFlowControl(
      1,
      Readable.from([Buffer.from('ab'), Buffer.from('c')]),
      flows,
    );
    expect(flows.has(1)).toBe(true);
    await expect(sent).resolves.toBe(3);
    expect(flows.has(1)).toBe(false);
    const data = (await events()).map((event) => (event.ev === 'chunk' ? event.data : ''));
    expect(Buffer.concat(data.map((d) => Buffer.from(d, 'base64'))).toString()).toBe('abc');
  });

  it('holds a stream while the agent pauses it and while the output is full', async () => {
    const { output, channel, events } = channelOver(1);
    const flows = new Map<number, Flow>();
    const source = new PassThrough();
    const sent = channel.sendWithFlowControl(1, source, flows);
    source.write('x');
    await new Promise(setImmediate);
    // The output is full (nobody reads it): the source waits for its drain.
    expect(source.isPaused()).toBe(true);
    flows.get(1)?.pause();
    await events(); // drains the output
    await new Promise(setImmediate);
    expect(source.isPaused()).toBe(true);
    flows.get(1)?.resume();
    expect(source.isPaused()).toBe(false);
    source.end();
    await expect(sent).resolves.toBe(1);
    expect(output.writableNeedDrain).toBe(false);
  });

  it('stops a stream the agent cancels, as request_timeout', async () => {
    const { channel } = channelOver();
    const flows = new Map<number, Flow>();
    const source = new PassThrough();
    const sent = channel.sendWithFlowControl(1, source, flows);
    flows.get(1)?.cancel();
    await expect(sent).rejects.toMatchObject({ code: 'request_timeout' });
    expect(flows.has(1)).toBe(false);
  });
});
