import { PassThrough } from 'node:stream';
import { RunOutput, settledWithin, type RunSink } from './run-output';

/** A sink that takes output until told it is full, then calls back on `drain()`. */
function sinkOf() {
  const received: string[] = [];
  const waiting: (() => void)[] = [];
  let full = false;
  const sink: RunSink = {
    stdout: (chunk) => received.push(`out:${chunk.toString()}`) > 0 && !full,
    stderr: (chunk) => received.push(`err:${chunk.toString()}`) > 0 && !full,
    onDrain: (resume) => waiting.push(resume),
  };
  return {
    sink,
    received,
    fill: () => (full = true),
    drain: () => {
      full = false;
      waiting.splice(0).forEach((resume) => resume());
    },
  };
}

const tick = () => new Promise(setImmediate);

describe('RunOutput', () => {
  it('forwards stdout and stderr and tells when both ended', async () => {
    const [stdout, stderr] = [new PassThrough(), new PassThrough()];
    const { sink, received } = sinkOf();
    const output = new RunOutput([stdout, stderr], sink);
    stdout.end('a');
    stderr.end('b');
    await output.ended;
    expect(received).toEqual(['out:a', 'err:b']);
  });

  it('stops reading while the sink is full, until it drains', async () => {
    const [stdout, stderr] = [new PassThrough(), new PassThrough()];
    const { sink, fill, drain } = sinkOf();
    new RunOutput([stdout, stderr], sink);
    fill();
    stdout.write('a');
    await tick();
    expect([stdout.isPaused(), stderr.isPaused()]).toEqual([true, true]);
    drain();
    expect([stdout.isPaused(), stderr.isPaused()]).toEqual([false, false]);
  });

  it('stops reading while the agent pauses it', async () => {
    const [stdout, stderr] = [new PassThrough(), new PassThrough()];
    const { sink, received } = sinkOf();
    const output = new RunOutput([stdout, stderr], sink);
    output.pause();
    stdout.write('a');
    await tick();
    expect(received).toEqual([]);
    output.resume();
    await tick();
    expect(received).toEqual(['out:a']);
  });
});

describe('RunOutput after the run finished', () => {
  it('still forwards what was read before the run finished, even when paused', async () => {
    const [stdout, stderr] = [new PassThrough(), new PassThrough()];
    const { sink, received, fill } = sinkOf();
    const output = new RunOutput([stdout, stderr], sink);
    output.pause();
    fill();
    stdout.write('early');
    stderr.write('warned');
    await tick();
    expect(received).toEqual([]);
    output.finish();
    expect(received).toEqual(['out:early', 'err:warned']);
    stdout.write('late');
    await tick();
    expect(received).toEqual(['out:early', 'err:warned']);
  });

  it('drops output that comes after the run finished, even when paused', async () => {
    const [stdout, stderr] = [new PassThrough(), new PassThrough()];
    const { sink, received } = sinkOf();
    const output = new RunOutput([stdout, stderr], sink);
    output.pause();
    output.finish();
    stdout.write('late');
    await tick();
    expect(received).toEqual([]);
    expect(stdout.isPaused()).toBe(false);
  });

  it("forwards late output when asked, at the sink's pace but never held by a pause", async () => {
    const [stdout, stderr] = [new PassThrough(), new PassThrough()];
    const { sink, received, fill, drain } = sinkOf();
    const output = new RunOutput([stdout, stderr], sink, 'forward');
    output.pause();
    output.finish();
    stdout.write('late');
    await tick();
    expect(received).toEqual(['out:late']);
    fill();
    stdout.write('more');
    await tick();
    expect(stdout.isPaused()).toBe(true);
    drain();
    expect(stdout.isPaused()).toBe(false);
  });
});

describe('settledWithin', () => {
  const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;

  it('takes what settles first, and leaves no timer once the promise won', async () => {
    const before = timers();
    await expect(settledWithin(Promise.resolve('done'), 60_000)).resolves.toBe('done');
    expect(timers()).toBe(before);
    await expect(settledWithin(Promise.reject(new Error('no')), 60_000)).rejects.toThrow('no');
    expect(timers()).toBe(before);
    await expect(settledWithin(new Promise(() => undefined), 5)).resolves.toBeUndefined();
  });
});
