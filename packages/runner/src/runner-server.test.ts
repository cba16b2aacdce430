import { createInterface } from 'node:readline';
import { PassThrough } from 'node:stream';
import type { RunResult } from '@sandbox/contract/run';
import type { RunHandle } from './exec';
import type { RunnerOp } from './op-handlers';
import { RunnerError, type RunnerEvent, type RunnerRequest, type RunSpec } from './protocol';
import type { RunSink } from './run-output';
import { serve } from './runner';
import { OP_HANDLERS } from './runner-server';

type StartRun = (spec: RunSpec, sink: RunSink) => Promise<RunHandle>;

/** A runner served over in-memory streams, and the events it sent. */
function startRunner(startRun?: StartRun) {
  const input = new PassThrough();
  const output = new PassThrough();
  const events: RunnerEvent[] = [];
  createInterface({ input: output }).on('line', (line) => {
    events.push(JSON.parse(line) as RunnerEvent);
  });
  const served = serve(input, output, { startRun });
  return {
    events,
    served,
    send(request: RunnerRequest | Record<string, unknown> | string): void {
      input.write(`${typeof request === 'string' ? request : JSON.stringify(request)}\n`);
    },
    /** The events of request `id`, once one of them is `ev`. */
    async until(id: number, ev: RunnerEvent['ev']): Promise<RunnerEvent[]> {
      for (let waited = 0; waited < 2000; waited += 5) {
        const mine = events.filter((event) => event.id === id);
        if (mine.some((event) => event.ev === ev)) return mine;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      throw new Error(`no ${ev} for request ${id}; events: ${JSON.stringify(events)}`);
    },
    async end(): Promise<void> {
      input.end();
      await served;
    },
    async destroy(): Promise<void> {
      input.destroy();
      await served;
    },
  };
}

const RESULT: RunResult = {
  exitCode: 0,
  executionTimeMs: 5,
  memoryUsedBytes: 1024,
  cpuTimeMs: 1,
  timedOut: false,
  filesWritten: [],
};

/** A run that the test finishes, recording what the runner asked of it. */
function fakeRun({ lingering = false } = {}) {
  let finish: (result: RunResult) => void = () => undefined;
  let close: () => void = () => undefined;
  const calls: string[] = [];
  const done = new Promise<RunResult>((resolve) => (finish = resolve));
  const handle: RunHandle = {
    pid: 4242,
    pauseOutput: () => calls.push('pause'),
    resumeOutput: () => calls.push('resume'),
    cancel: () => calls.push('cancel'),
    done,
    // Without a lingering background process, the pipes close with the run.
    closed: lingering ? new Promise((resolve) => (close = resolve)) : done.then(() => undefined),
  };
  return { handle, calls, finish: (result = RESULT) => finish(result), close: () => close() };
}

/** A code run: the only runs this runner starts (command runs are the front's, ADR 47). */
const EXEC = { op: 'exec', code: '1', env: {}, cwd: '/workspace', timeoutMs: 1000 } as const;

/** A runner whose one run (request 1, EXEC) has started. */
async function startedRun() {
  const run = fakeRun();
  const runner = startRunner(() => Promise.resolve(run.handle));
  runner.send({ id: 1, ...EXEC });
  await runner.until(1, 'started');
  return { run, runner };
}

describe('serve: pings, bad lines, unknown targets', () => {
  it('answers a ping with its pid', async () => {
    const runner = startRunner();
    runner.send({ id: 1, op: 'ping' });
    expect(await runner.until(1, 'pong')).toEqual([{ id: 1, ev: 'pong', pid: process.pid }]);
    await runner.end();
  });

  it('has sent its answers by the time it returns at the end of its input (its process exits then)', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    input.end(`${JSON.stringify({ id: 1, op: 'ping' })}\n`);
    await serve(input, output);
    expect(String(output.read())).toBe(
      `${JSON.stringify({ id: 1, ev: 'pong', pid: process.pid })}\n`,
    );
  });

  it.each(['launch', 'toString', 'constructor', '__proto__'])(
    'refuses the unknown op %j',
    async (op) => {
      const runner = startRunner();
      runner.send({ id: 7, op });
      expect(await runner.until(7, 'error')).toEqual([
        { id: 7, ev: 'error', code: 'invalid_request', message: 'Unknown operation' },
      ]);
      await runner.end();
    },
  );

  it('ignores lines that are not JSON objects with an id, and goes on serving', async () => {
    const runner = startRunner();
    runner.send('{not json');
    runner.send('');
    runner.send('null');
    runner.send('[1]');
    runner.send('"ping"');
    runner.send({ op: 'ping' });
    runner.send({ id: 2, op: 'ping' });
    await runner.until(2, 'pong');
    await runner.end();
    expect(runner.events.map((event) => [event.id, event.ev])).toEqual([[2, 'pong']]);
  });

  it('answers cancel, pause and resume of an unknown target', async () => {
    const runner = startRunner();
    runner.send({ id: 1, op: 'cancel', target: 99 });
    runner.send({ id: 2, op: 'pause', target: 99 });
    runner.send({ id: 3, op: 'resume', target: 99 });
    expect(await runner.until(1, 'killed')).toEqual([{ id: 1, ev: 'killed', pids: [] }]);
    expect(await runner.until(2, 'flow')).toEqual([{ id: 2, ev: 'flow' }]);
    expect(await runner.until(3, 'flow')).toEqual([{ id: 3, ev: 'flow' }]);
    await runner.end();
  });
});

describe('serve: runs', () => {
  it('sends a run as started, its output, then its result', async () => {
    const run = fakeRun();
    const runner = startRunner((_spec, sink) => {
      setImmediate(() => {
        sink.stdout(Buffer.from('out'));
        sink.stderr(Buffer.from('err'));
        run.finish();
      });
      return Promise.resolve(run.handle);
    });
    runner.send({ id: 1, ...EXEC });
    expect(await runner.until(1, 'exec')).toEqual([
      { id: 1, ev: 'started', pid: 4242 },
      { id: 1, ev: 'stdout', data: Buffer.from('out').toString('base64') },
      { id: 1, ev: 'stderr', data: Buffer.from('err').toString('base64') },
      { id: 1, ev: 'result', ...RESULT },
      { id: 1, ev: 'exec' },
    ]);
    await runner.end();
    expect(run.calls).toEqual([]);
  });

  it('sends what background processes write after the result, until the pipes close', async () => {
    const run = fakeRun({ lingering: true });
    let sink: RunSink | undefined;
    const runner = startRunner((_spec, given) => {
      sink = given;
      return Promise.resolve(run.handle);
    });
    runner.send({ id: 1, ...EXEC });
    await runner.until(1, 'started');
    run.finish();
    await runner.until(1, 'result');
    sink?.stdout(Buffer.from('late'));
    run.close();
    expect((await runner.until(1, 'exec')).slice(-2)).toEqual([
      { id: 1, ev: 'stdout', data: Buffer.from('late').toString('base64') },
      { id: 1, ev: 'exec' },
    ]);
    await runner.end();
  });

  it('passes pause, resume and cancel on to a run', async () => {
    const { run, runner } = await startedRun();
    runner.send({ id: 2, op: 'pause', target: 1 });
    runner.send({ id: 3, op: 'resume', target: 1 });
    runner.send({ id: 4, op: 'cancel', target: 1 });
    await runner.until(4, 'killed');
    expect(run.calls).toEqual(['pause', 'resume', 'cancel']);
    run.finish();
    await runner.until(1, 'exec');
    await runner.end();
  });

  it('applies a cancel that came while the run was prepared once it starts', async () => {
    const run = fakeRun();
    let prepared: () => void = () => undefined;
    const runner = startRunner(
      () => new Promise<RunHandle>((resolve) => (prepared = () => resolve(run.handle))),
    );
    runner.send({ id: 1, ...EXEC });
    runner.send({ id: 2, op: 'cancel', target: 1 });
    await runner.until(2, 'killed');
    expect(run.calls).toEqual([]);
    prepared();
    await runner.until(1, 'started');
    expect(run.calls).toEqual(['cancel']);
    run.finish();
    await runner.until(1, 'exec');
    await runner.end();
  });
});

describe('serve: refused runs and the end of its input', () => {
  it('reports a run that cannot start as an error with its code', async () => {
    const runner = startRunner(() =>
      Promise.reject(
        new RunnerError('invalid_path', 'workingDir is not a directory: x', { path: 'x' }),
      ),
    );
    runner.send({ id: 1, ...EXEC });
    expect(await runner.until(1, 'error')).toEqual([
      {
        id: 1,
        ev: 'error',
        code: 'invalid_path',
        message: 'workingDir is not a directory: x',
        details: { path: 'x' },
      },
    ]);
    await runner.end();
  });

  it("refuses a command run, which only the runner's front serves, and starts nothing", async () => {
    const runner = startRunner();
    runner.send({ id: 1, op: 'exec', command: 'true', env: {}, cwd: '/nowhere', timeoutMs: 1000 });
    expect(await runner.until(1, 'error')).toEqual([
      {
        id: 1,
        ev: 'error',
        code: 'internal_error',
        message: "command runs are served by the runner's front",
      },
    ]);
    await runner.end();
  });

  it('cancels foreground runs when its input ends', async () => {
    const { run, runner } = await startedRun();
    await runner.end();
    expect(run.calls).toEqual(['cancel']);
  });

  it('ends, cancelling foreground runs, when its input closes without ending (a destroyed socket)', async () => {
    const { run, runner } = await startedRun();
    await runner.destroy();
    expect(run.calls).toEqual(['cancel']);
  });
});

describe('OP_HANDLERS', () => {
  it('has a handler for every op of the protocol and nothing else', () => {
    // A Record over the protocol's ops: the compiler rejects a missing or unknown one here.
    const ops: Record<RunnerOp, true> = {
      exec: true,
      terminal: true,
      input: true,
      resize: true,
      cancel: true,
      pause: true,
      resume: true,
      kill: true,
      stats: true,
      writeFiles: true,
      readFile: true,
      listFiles: true,
      statFile: true,
      removeFile: true,
      renameFile: true,
      makeDirectory: true,
      watch: true,
      missingPackages: true,
      installBundle: true,
      context: true,
      ping: true,
    };
    expect(Object.keys(OP_HANDLERS).sort()).toEqual(Object.keys(ops).sort());
    for (const handler of Object.values(OP_HANDLERS)) expect(typeof handler).toBe('function');
  });
});
