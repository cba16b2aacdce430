import {
  AbortedError,
  ClientTimeoutError,
  Files,
  InvalidRequestError,
  NetworkError,
  Sandbox,
  SandboxError,
  WatchLimitExceededError,
} from '../src';
import { HttpClient, resolveOptions } from '../src/http';
import { apiError, caught, clientOf, json, sessionInfo, sse, stalled, type Call } from './fake-api';

describe('request timeouts', () => {
  it('fails a request whose answer never comes with ClientTimeoutError, a NetworkError', async () => {
    const api = clientOf(stalled, { requestTimeoutMs: 30, maxRetries: 0 });
    const started = Date.now();
    const err = await caught(Sandbox.connect('ses_abc', api.options));
    expect(err).toBeInstanceOf(ClientTimeoutError);
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).toMatchObject({ code: 'client_timeout', status: 0 });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(api.calls[0]?.closed).toBe(true); // the stalled connection was given up
  });

  it('sends a read again after a stall, as after a cut connection', async () => {
    let attempts = 0;
    const api = clientOf(
      (call) => {
        attempts += 1;
        return attempts === 1 ? stalled(call) : json(sessionInfo());
      },
      { requestTimeoutMs: 30 },
    );
    const sandbox = await Sandbox.connect('ses_abc', api.options);
    expect(sandbox.id).toBe('ses_abc');
    expect(attempts).toBe(2);
  });

  it('never sends a run again after a stall (a run must not start twice)', async () => {
    const api = clientOf(
      (call) => (call.path === '/execute' ? stalled(call) : json(sessionInfo())),
      { requestTimeoutMs: 30 },
    );
    const sandbox = await Sandbox.connect('ses_abc', api.options);
    // A run's answer may take its own timeout on top of the request's: 1 s here.
    const err = await caught(sandbox.exec('true', { timeoutMs: 1 }));
    expect(err).toBeInstanceOf(ClientTimeoutError);
    expect(api.calls.filter((c) => c.path === '/execute')).toHaveLength(1);
  }, 10_000);
});

describe('request timeouts of streams', () => {
  it('gives a stream that goes quiet up, and resumes it where it stopped', async () => {
    const opened: Call[] = [];
    const api = clientOf(
      (call) => {
        if (call.path !== '/execute') return json(sessionInfo());
        opened.push(call);
        if (call.headers['last-event-id'] === undefined) {
          // The run starts, says one line, then nothing comes (a stalled connection).
          return sse(
            call,
            [
              {
                event: 'started',
                data: { type: 'started', pid: 7, processId: 'proc_aa' },
                id: 'proc_aa:0:0',
              },
              { event: 'stdout', data: { type: 'stdout', data: 'a' }, id: 'proc_aa:1:0' },
            ],
            { hold: true },
          );
        }
        return sse(call, [
          { event: 'stdout', data: { type: 'stdout', data: 'b' }, id: 'proc_aa:2:0' },
          { event: 'exit', data: { type: 'exit', code: 0 }, id: 'proc_aa:2:0:exit' },
          {
            event: 'result',
            data: { stdout: 'ab', exitCode: 0, timedOut: false },
            id: 'proc_aa:2:0:end',
          },
        ]);
      },
      { requestTimeoutMs: 50 },
    );
    const sandbox = await Sandbox.connect('ses_abc', { ...api.options, requestTimeoutMs: 50 });
    let stdout = '';
    for await (const event of sandbox.stream({ command: 'x' })) {
      if (event.type === 'stdout') stdout += event.data;
    }
    expect(stdout).toBe('ab');
    const resumed = opened.map((c) => c.headers['last-event-id']);
    expect(resumed).toEqual([undefined, 'proc_aa:1:0']);
  });

  it('has no limit with requestTimeoutMs 0', () => {
    const options = resolveOptions({ apiKey: 'k', requestTimeoutMs: 0 });
    expect(options.requestTimeoutMs).toBe(0);
    expect(resolveOptions({ apiKey: 'k' }).requestTimeoutMs).toBe(60_000);
  });
});

describe('every failure is a SandboxError', () => {
  it('an abort is an AbortedError whose cause is the reason', async () => {
    const api = clientOf(stalled);
    const controller = new AbortController();
    const reason = new Error('changed my mind');
    setTimeout(() => controller.abort(reason), 10);
    const err = await caught(
      Sandbox.connect('ses_abc', { ...api.options, signal: controller.signal }),
    );
    expect(err).toBeInstanceOf(AbortedError);
    expect(err).toMatchObject({ code: 'aborted', status: 0, cause: reason });
  });

  it('a connection that fails is a NetworkError with the cause', async () => {
    const failure = new TypeError('fetch failed');
    const api = clientOf(() => Promise.reject(failure), { maxRetries: 0 });
    const err = await caught(Sandbox.connect('ses_abc', api.options));
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).toMatchObject({ code: 'network_error', cause: failure });
  });

  it('an answer that is not JSON is a SandboxError', async () => {
    const api = clientOf(() => new Response('<html>proxy</html>', { status: 200 }));
    const http = new HttpClient(resolveOptions(api.options));
    const err = await caught(http.json({ method: 'GET', path: '/sessions', retry: 'safe' }));
    expect(err).toBeInstanceOf(SandboxError);
    expect(err).toMatchObject({ code: 'invalid_response', status: 200 });
  });

  it('an event that is not JSON is a SandboxError', async () => {
    const api = clientOf((call) =>
      call.path === '/execute'
        ? new Response('event: stdout\ndata: {oops\n\n', {
            headers: { 'content-type': 'text/event-stream' },
          })
        : json(sessionInfo()),
    );
    const sandbox = await Sandbox.connect('ses_abc', api.options);
    const err = await caught(sandbox.exec('x', { onStdout: () => undefined }));
    expect(err).toBeInstanceOf(SandboxError);
    expect(err).toMatchObject({ code: 'invalid_response' });
  });

  it('a bad input is an InvalidRequestError before any request', async () => {
    const api = clientOf(() => json(sessionInfo()));
    const sandbox = await Sandbox.connect('ses_abc', api.options);
    const before = api.calls.length;
    const both = { code: 'a', command: 'b' } as unknown as { code: string };
    await expect(sandbox.run(both)).rejects.toBeInstanceOf(InvalidRequestError);
    await expect(sandbox.exec({} as { command: string })).rejects.toMatchObject({
      code: 'invalid_request',
      details: { field: 'command' },
    });
    await expect(sandbox.exec('x', { timeoutMs: 1000, timeout: 1 })).rejects.toBeInstanceOf(
      InvalidRequestError,
    );
    expect(api.calls.length).toBe(before);
  });
});

describe('429s', () => {
  it('throws a held limit (sessions, watches) at once, where a rate limit is waited for', async () => {
    const held = clientOf(() => apiError(429, 'watch_limit_exceeded'));
    const watching = new Files(new HttpClient(resolveOptions(held.options)), 'ses_abc');
    await expect(watching.watch('src')).rejects.toBeInstanceOf(WatchLimitExceededError);
    expect(held.calls).toHaveLength(1);
    let attempts = 0;
    const limited = clientOf(() => {
      attempts += 1;
      return attempts === 1
        ? json({ error: { code: 'rate_limit_exceeded', message: 'x', retryAfter: 0 } }, 429)
        : json(sessionInfo());
    });
    await Sandbox.connect('ses_abc', limited.options);
    expect(attempts).toBe(2);
  });
});
