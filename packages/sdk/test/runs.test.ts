import {
  AbortedError,
  ExecutionTimeoutError,
  InvalidRequestError,
  NetworkError,
  RunNotStartedError,
  Sandbox,
} from '../src';
import {
  apiError,
  clientOf,
  json,
  PROC,
  processInfo,
  resultOf,
  runEvents,
  sessionInfo,
  sse,
  type Call,
  type Route,
} from './fake-api';

const SESSION = '/sessions/ses_abc';

/** A sandbox whose API answers runs from `run` (and the session's info). */
async function sandboxWith(run: Route) {
  const api = clientOf((call) => (call.path === SESSION ? json(sessionInfo()) : run(call)));
  const sandbox = await Sandbox.connect('ses_abc', api.options);
  const kills = () => api.calls.filter((c) => c.path === '/execution/kill').map((c) => c.body);
  const runs = () => api.calls.filter((c) => c.path === '/execute');
  return { sandbox, calls: api.calls, kills, runs };
}

/** A run under way: it started and printed, and goes on (its stream stays open). */
const running = (call: Call) =>
  sse(call, runEvents('going\n').slice(0, 2), {
    hold: true,
    headers: { 'x-process-id': PROC, 'x-process-pid': '42' },
  });

/** Streamed runs under way; a resume (Last-Event-ID) gives the rest of the run at once. */
function runThenResume(resumed = runEvents('going\n')): Route {
  return (call) => {
    if (call.path !== '/execute') return apiError(404, 'not_found');
    const from = call.headers['last-event-id'];
    if (from === undefined) return running(call);
    return sse(
      call,
      resumed.filter((e) => e.id !== undefined && e.id > from),
    );
  };
}

describe('streams', () => {
  it('leaving a stream loop closes the connection and never kills the run', async () => {
    const { sandbox, kills, runs } = await sandboxWith(runThenResume());
    for await (const event of sandbox.stream('setInterval(() => {}, 1000)')) {
      if (event.type === 'stdout') break;
    }
    expect(runs()[0]?.closed).toBe(true);
    expect(kills()).toEqual([]);
  });

  it('aborting the signal kills the run and throws AbortedError', async () => {
    const { sandbox, kills } = await sandboxWith(runThenResume());
    const controller = new AbortController();
    const failure = sandbox
      .exec('sleep 9', { signal: controller.signal })
      .catch((err: unknown) => err);
    setTimeout(() => controller.abort(), 20);
    expect(await failure).toBeInstanceOf(AbortedError);
    expect(kills()).toEqual([{ sessionId: 'ses_abc', pid: 42 }]);
  });

  it('sends files as text or bytes, and the timeout in whole seconds', async () => {
    const { sandbox, runs } = await sandboxWith(() => json(resultOf('')));
    await sandbox.exec('cat a b', {
      timeoutMs: 1500,
      files: [
        { path: 'a', content: 'text' },
        { path: 'b', content: Uint8Array.from([0, 255]) },
      ],
    });
    expect(runs()[0]?.body).toMatchObject({
      command: 'cat a b',
      timeout: 2,
      files: [
        { path: 'a', content: 'text' },
        { path: 'b', content: 'AP8=', encoding: 'base64' },
      ],
    });
    await sandbox.run({ command: 'true' }, { timeout: 3 }); // the deprecated name, seconds
    expect(runs()[1]?.body).toMatchObject({ command: 'true', timeout: 3 });
  });
});

describe('runs in the background', () => {
  it('gives a handle at the start, lets go of the stream, and waits by resuming', async () => {
    const { sandbox, kills, runs } = await sandboxWith(runThenResume());
    const handle = await sandbox.exec('sleep 9', { background: true });
    expect(handle).toMatchObject({ pid: 42, id: PROC });
    expect(runs()[0]?.body).toMatchObject({ command: 'sleep 9', stream: true });
    expect(runs()[0]?.closed).toBe(true); // detached: the run goes on without us
    expect(kills()).toEqual([]);
    const result = await handle.wait();
    expect(result).toMatchObject({ stdout: 'going\n', exitCode: 0 });
    expect(runs()[1]?.headers['last-event-id']).toBe(`${PROC}:0:0`);
    expect(runs()[1]?.body).toEqual({ sessionId: 'ses_abc', stream: true });
  });

  it('names the process from the headers when no started event comes (an older service)', async () => {
    const { sandbox } = await sandboxWith((call) =>
      sse(call, runEvents('x').slice(1, 2), {
        hold: true,
        headers: { 'x-process-id': PROC, 'x-process-pid': '42' },
      }),
    );
    expect(await sandbox.run('x', { background: true })).toMatchObject({ pid: 42, id: PROC });
  });

  it('throws the timeout from wait, as run does', async () => {
    const timedOut = runEvents('');
    timedOut[3] = { ...timedOut[3]!, data: resultOf('', 124, true) };
    const { sandbox } = await sandboxWith(runThenResume(timedOut));
    const handle = await sandbox.exec('sleep 99', { background: true, timeoutMs: 1000 });
    await expect(handle.wait()).rejects.toBeInstanceOf(ExecutionTimeoutError);
  });

  it('feeds output callbacks from the same stream, then gives the result', async () => {
    let opened = 0;
    const { sandbox } = await sandboxWith((call) => {
      opened += 1;
      return sse(call, runEvents('fed\n'));
    });
    const seen: string[] = [];
    const handle = await sandbox.exec('echo fed', {
      background: true,
      onStdout: (data) => seen.push(data),
    });
    expect((await handle.wait()).stdout).toBe('fed\n');
    expect(seen).toEqual(['fed\n']);
    expect(opened).toBe(1);
  });
});

describe('runs in the background: disconnects, failures and ids', () => {
  it('stops feeding callbacks on disconnect, leaving the run going; wait still ends', async () => {
    const { sandbox, kills, runs } = await sandboxWith(runThenResume());
    const seen: string[] = [];
    const handle = await sandbox.exec('sleep 9', {
      background: true,
      onStdout: (data) => seen.push(data),
    });
    const waiting = handle.wait();
    await new Promise((resolve) => setTimeout(resolve, 20));
    handle.disconnect();
    expect(await waiting).toMatchObject({ stdout: 'going\n' });
    expect(seen).toEqual(['going\n']);
    expect(runs()[0]?.closed).toBe(true);
    expect(runs()[1]?.headers['last-event-id']).toBe(`${PROC}:0:0`);
    expect(kills()).toEqual([]);
  });

  it('throws RunNotStartedError with the result when the run never had a process', async () => {
    const { sandbox } = await sandboxWith((call) =>
      sse(call, [
        { event: 'stderr', data: { type: 'stderr', data: 'install failed\n' }, id: '1' },
        { event: 'exit', data: { type: 'exit', code: 1 }, id: '2' },
        { event: 'result', data: resultOf('', 1), id: '3' },
      ]),
    );
    const err = await sandbox.run('import "nope"', { background: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RunNotStartedError);
    expect(err).toMatchObject({ code: 'run_not_started', result: { exitCode: 1 } });
  });

  it('kills, reads, follows and writes to its run by its proc_ id', async () => {
    let state: 'running' | 'exited' = 'running';
    const { sandbox, calls, kills } = await sandboxWith((call) => {
      if (call.path === '/execute') return running(call);
      if (call.path === `${SESSION}/processes/${PROC}`) return json(processInfo(state));
      if (call.path === '/execution/kill') return json({ killed: 1, pids: [42] });
      if (call.path.endsWith('/stdin')) return json({ written: 2, closed: false });
      if (call.path.endsWith('/output') && call.headers.accept === 'text/event-stream') {
        return sse(call, [{ event: 'end', data: processInfo('exited') }]);
      }
      return json({ process: processInfo(state), stdout: 'o', stderr: '', next: {}, gap: false });
    });
    const handle = await sandbox.exec('cat', { background: true, stdin: true });
    await handle.writeStdin('hi');
    expect((await handle.output()).stdout).toBe('o');
    const followed = [];
    for await (const event of handle.follow()) followed.push(event.type);
    expect(followed).toEqual(['end']);
    expect(await handle.kill()).toEqual({ killed: 1, pids: [42] });
    expect(kills()).toEqual([{ sessionId: 'ses_abc', pid: 42 }]);
    state = 'exited'; // its pid may name another process now: not killed
    expect(await handle.kill()).toEqual({ killed: 0, pids: [] });
    expect(kills()).toHaveLength(1);
    const paths = calls.map((c) => c.path).filter((p) => p.includes('/processes/'));
    expect(paths.every((p) => p.includes(`/processes/${PROC}`))).toBe(true);
  });

  it('throws a NetworkError when following keeps dropping', async () => {
    const { sandbox, calls } = await sandboxWith((call) =>
      sse(call, [{ event: 'stdout', data: { type: 'stdout', data: 'x' }, id: `${PROC}:1:0` }]),
    );
    const seen: string[] = [];
    const failure = await (async () => {
      for await (const event of sandbox.processes.follow(PROC)) seen.push(event.type);
    })().catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(NetworkError);
    expect(failure).toMatchObject({ code: 'network_error' });
    expect(calls.filter((c) => c.path.endsWith('/output'))).toHaveLength(6); // 5 resumes
    expect(calls.at(-1)?.headers['last-event-id']).toBe(`${PROC}:1:0`);
  });
});

describe('runs in the background: context cells and reconnects', () => {
  it("streams a context cell's values and error to onResult/onError, then gives the result", async () => {
    const shown = { 'image/svg+xml': '<svg/>', 'text/plain': '[image/svg+xml]', isMain: false };
    const main = { 'text/plain': '3', 'application/json': '3', isMain: true };
    const error = { name: 'TypeError', message: 'no', stack: 'TypeError: no' };
    const cell = { ...resultOf(''), exitCode: 1, results: [shown, main], error };
    const { sandbox, runs } = await sandboxWith((call) =>
      sse(call, [
        {
          event: 'started',
          data: { type: 'started', pid: 42, processId: PROC },
          id: `${PROC}:0:0`,
        },
        {
          event: 'cell_result',
          data: { type: 'cell_result', result: shown },
          id: `${PROC}:0:0:cell1`,
        },
        {
          event: 'cell_result',
          data: { type: 'cell_result', result: main },
          id: `${PROC}:0:0:cell2`,
        },
        { event: 'cell_error', data: { type: 'cell_error', error }, id: `${PROC}:0:0:cell3` },
        { event: 'exit', data: { type: 'exit', code: 1 }, id: `${PROC}:0:0:exit` },
        { event: 'result', data: cell, id: `${PROC}:0:0:end` },
      ]),
    );
    const seen: unknown[] = [];
    const result = await sandbox.runCode('display(svg); 1 + 2', {
      context: 'ctx_0123456789abcdef01234567',
      onResult: (value) => seen.push(value),
      onError: (thrown) => seen.push(thrown.name),
    });
    expect(seen).toEqual([shown, main, 'TypeError']);
    expect(result).toEqual(cell);
    expect(runs()[0]?.body).toMatchObject({
      stream: true,
      contextId: 'ctx_0123456789abcdef01234567',
    });
    const types = [];
    for await (const event of sandbox.stream('1', { contextId: 'ctx_0123456789abcdef01234567' })) {
      types.push(event.type === 'cell_result' ? event.result['text/plain'] : event.type);
    }
    expect(types).toEqual(['started', '[image/svg+xml]', '3', 'cell_error', 'exit', 'result']);
  });

  it('connects to a run by its pid or proc_ id', async () => {
    const { sandbox } = await sandboxWith(() => json(processInfo('running')));
    expect(await sandbox.processes.connect(PROC)).toMatchObject({ pid: 42, id: PROC });
  });
});

describe('kill', () => {
  it('never kills everything for a missing pid; killAll does, explicitly', async () => {
    const { sandbox, kills } = await sandboxWith(() => json({ killed: 3, pids: [1, 2, 3] }));
    const kill = sandbox.processes.kill.bind(sandbox.processes) as (pid?: unknown) => unknown;
    await expect(kill(undefined)).rejects.toBeInstanceOf(InvalidRequestError);
    await expect(kill('12')).rejects.toBeInstanceOf(InvalidRequestError);
    expect(kills()).toEqual([]);
    await sandbox.processes.kill(12);
    expect(await sandbox.processes.killAll()).toMatchObject({ killed: 3 });
    expect(kills()).toEqual([{ sessionId: 'ses_abc', pid: 12 }, { sessionId: 'ses_abc' }]);
  });
});
