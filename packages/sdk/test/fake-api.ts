/** A fake of the API behind the SDK's `fetch` option: each request to a route of the test. */

export interface Call {
  method: string;
  /** Without the `/v1` prefix. */
  path: string;
  query: URLSearchParams;
  headers: Record<string, string>;
  /** The JSON body, parsed. */
  body: Record<string, unknown> | undefined;
  signal: AbortSignal | undefined;
  /** The request was given up: its signal aborted, or its answer's body was cancelled. */
  closed: boolean;
}

export type Route = (call: Call) => Response | Promise<Response>;

export const API_URL = 'http://api.test/v1';

/** What `promise` rejects with (or its value): for assertions on the error a call throws. */
export const caught = (promise: Promise<unknown>): Promise<unknown> =>
  promise.catch((err: unknown) => err);

/** A fetch answering from `route`, and the calls it got. */
export function fakeFetch(route: Route): { fetch: typeof fetch; calls: Call[] } {
  const calls: Call[] = [];
  const fetchImpl = async (input: URL | RequestInfo, init: RequestInit = {}) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const call: Call = {
      method: init.method ?? 'GET',
      path: url.pathname.replace(/^\/v1/, ''),
      query: url.searchParams,
      headers: (init.headers ?? {}) as Record<string, string>,
      body:
        typeof init.body === 'string'
          ? (JSON.parse(init.body) as Record<string, unknown>)
          : undefined,
      signal: init.signal ?? undefined,
      closed: false,
    };
    calls.push(call);
    call.signal?.addEventListener('abort', () => (call.closed = true), { once: true });
    if (call.signal?.aborted === true) throw call.signal.reason;
    return route(call);
  };
  return { fetch: fetchImpl, calls };
}

/** Client options of the SDK talking to `route`. */
export function clientOf(
  route: Route,
  extra: { requestTimeoutMs?: number; maxRetries?: number } = {},
) {
  const fake = fakeFetch(route);
  return { options: { apiKey: 'sk_test', apiUrl: API_URL, fetch: fake.fetch, ...extra }, ...fake };
}

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

export function apiError(status: number, code: string): Response {
  return json({ error: { code, message: code } }, status);
}

export interface FakeEvent {
  event: string;
  data: unknown;
  id?: string;
}

/**
 * A text/event-stream answer with `events`; `hold`: it then stays open, as a run that goes
 * on does, until the request is given up.
 */
export function sse(
  call: Call,
  events: FakeEvent[],
  options: { headers?: Record<string, string>; hold?: boolean } = {},
): Response {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const e of events) {
        const id = e.id === undefined ? '' : `id: ${e.id}\n`;
        controller.enqueue(
          encoder.encode(`${id}event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`),
        );
      }
      if (options.hold !== true) {
        controller.close();
        return;
      }
      call.signal?.addEventListener('abort', () => controller.error(call.signal?.reason), {
        once: true,
      });
    },
    cancel() {
      call.closed = true;
    },
  });
  return new Response(body, {
    status: 200,
    headers: { 'content-type': 'text/event-stream', ...options.headers },
  });
}

/** A fetch that never answers (a stalled connection) until its signal aborts. */
export function stalled(call: Call): Promise<Response> {
  return new Promise((_resolve, reject) => {
    call.signal?.addEventListener('abort', () => reject(call.signal?.reason as Error), {
      once: true,
    });
  });
}

export const PROC = 'proc_0123456789abcdef';

/** A run's result as the API gives it. */
export function resultOf(stdout: string, exitCode = 0, timedOut = false) {
  return {
    stdout,
    stderr: '',
    exitCode,
    executionTime: 3,
    memoryUsed: 1,
    cpuTime: 1,
    timedOut,
    filesWritten: [],
  };
}

/** The events of a whole streamed run printing `stdout`. */
export function runEvents(stdout: string, exitCode = 0): FakeEvent[] {
  const at = new TextEncoder().encode(stdout).length;
  return [
    { event: 'started', data: { type: 'started', pid: 42, processId: PROC }, id: `${PROC}:0:0` },
    { event: 'stdout', data: { type: 'stdout', data: stdout }, id: `${PROC}:${at}:0` },
    { event: 'exit', data: { type: 'exit', code: exitCode }, id: `${PROC}:${at}:0:exit` },
    { event: 'result', data: resultOf(stdout, exitCode), id: `${PROC}:${at}:0:end` },
  ];
}

/** A session as the API describes it. */
export function sessionInfo(id = 'ses_abc') {
  return {
    sessionId: id,
    createdAt: '2026-01-01T00:00:00.000Z',
    expiresAt: '2026-01-02T00:00:00.000Z',
    lastActive: '2026-01-01T00:00:00.000Z',
    state: 'active',
    previewUrl: `http://${id}.preview.test`,
    filesCount: 0,
    activeProcesses: 0,
    metadata: {},
  };
}

/** A run of the process list. */
export function processInfo(state: 'running' | 'exited', pid = 42) {
  return {
    id: PROC,
    pid,
    kind: 'command',
    command: 'sleep 9',
    state,
    startedAt: '2026-01-01T00:00:00.000Z',
    exitedAt: state === 'running' ? null : '2026-01-01T00:00:01.000Z',
    exitCode: state === 'running' ? null : 0,
    timedOut: false,
    stdin: false,
    stdinBytes: 0,
    outputOpen: state === 'running',
    stdoutBytes: 0,
    stderrBytes: 0,
    keptFrom: { stdout: 0, stderr: 0 },
    maxOutputBytes: 1024,
  };
}
