import { errorFromResponse, NetworkError, SandboxError } from './errors.js';
import type { WebSocketConstructor } from './terminal-handle.js';
import { abortedError, Watchdog } from './watchdog.js';

/** 429s for a count the account or session holds: waiting does not end them. */
const HELD_LIMITS: ReadonlySet<string> = new Set([
  'session_limit_exceeded',
  'watch_limit_exceeded',
]);
/** How the SDK reaches the API. Every field has a default; see `resolveOptions`. */
export interface ClientOptions {
  /** The API key (`sk_live_…`); default: the SANDBOX_API_KEY environment variable. */
  apiKey?: string;
  /** The API's base URL, `/v1` included; default: SANDBOX_API_URL, else http://127.0.0.1:8080/v1. */
  apiUrl?: string;
  /** Retries of a request answered 429 or 503 (or, when safe, cut off); default 4. */
  maxRetries?: number;
  /** A wait longer than this (a Retry-After far away) is not waited for: the error is thrown. */
  maxRetryDelayMs?: number;
  /**
   * How long a request may go without a sign of life before it fails with a
   * ClientTimeoutError (a NetworkError): its answer's headers not come yet, or no byte of a
   * body being read or sent. Default 60 000; 0: no limit. A run (`run`, `exec`, `stream`)
   * gets its own timeout on top of it for its answer; a stream's keep-alives (every 15 s)
   * count as life. A body sent whole (text or bytes, not a stream) must be sent within it.
   */
  requestTimeoutMs?: number;
  /** The fetch to use; default: the global one. */
  fetch?: typeof fetch;
  /**
   * The WebSocket class terminals open with; default: the runtime's (browsers, Node 22+,
   * Bun, Deno). On Node 20: `import WebSocket from 'ws'`.
   */
  WebSocket?: WebSocketConstructor;
}

export interface ResolvedOptions {
  apiKey: string;
  apiUrl: string;
  maxRetries: number;
  maxRetryDelayMs: number;
  requestTimeoutMs: number;
  fetch: typeof fetch;
  WebSocket: WebSocketConstructor | undefined;
}

const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

export const DEFAULT_API_URL = 'http://127.0.0.1:8080/v1';
const BASE_DELAY_MS = 250;
const MAX_BACKOFF_MS = 8_000;

/** Where the runtime keeps its environment (Node, Bun; Deno with --allow-env), if anywhere. */
function environment(): Record<string, string | undefined> {
  const proc = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  return proc?.env ?? {};
}

export function resolveOptions(options: ClientOptions = {}): ResolvedOptions {
  const env = environment();
  const apiKey = options.apiKey ?? env.SANDBOX_API_KEY;
  if (apiKey === undefined || apiKey === '') {
    throw new SandboxError({
      code: 'missing_api_key',
      status: 0,
      message: 'No API key: pass apiKey or set SANDBOX_API_KEY',
    });
  }
  const fetchImpl = options.fetch ?? globalThis.fetch;
  if (typeof fetchImpl !== 'function') {
    throw new SandboxError({
      code: 'missing_fetch',
      status: 0,
      message: 'This runtime has no fetch: pass one as options.fetch',
    });
  }
  return {
    apiKey,
    apiUrl: (options.apiUrl ?? env.SANDBOX_API_URL ?? DEFAULT_API_URL).replace(/\/+$/, ''),
    maxRetries: options.maxRetries ?? 4,
    maxRetryDelayMs: options.maxRetryDelayMs ?? 60_000,
    requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    // Called as a method of this object: a browser's own fetch refuses a `this` that is not
    // its window ("Illegal invocation"), so it is called through a function of its own.
    fetch: (input, init) => fetchImpl(input, init),
    WebSocket: options.WebSocket,
  };
}

/**
 * Which failures a request may be sent again after:
 * - `safe`: 429, 503 and a connection cut before any answer (reads, deletes, writes that
 *   replace, and creates carrying an Idempotency-Key: sending them twice does no harm);
 * - `refused`: only 429, which the service answers before it does anything (a run: a 503 may
 *   come from a node lost under a run that had started, and a run must not start twice);
 * - `never`: a body that cannot be sent again (a stream being uploaded).
 */
export type RetryPolicy = 'safe' | 'refused' | 'never';

export interface RequestSpec {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  query?: Record<string, string | number | undefined>;
  /** JSON, or a function making a fresh body for each attempt. */
  json?: unknown;
  body?: () => { body: BodyInit; contentType: string };
  headers?: Record<string, string>;
  signal?: AbortSignal | undefined;
  retry: RetryPolicy;
  /** How long the answer may take to come (default: the client's `requestTimeoutMs`). */
  timeoutMs?: number;
  /**
   * The caller reads the body as a stream (`send`): it may take as long as it needs, but may
   * not go quiet for longer than `requestTimeoutMs`. Else the watch ends with the headers.
   */
  stream?: boolean;
}

/** Seconds of a Retry-After header (delta-seconds or an HTTP date), if it has a usable one. */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - now) / 1000);
}

/**
 * How long to wait before attempt `attempt + 1`: what the service asked for (Retry-After, or
 * for a 429 without it the rate-limit reset) plus up to 10 % so that clients refused together
 * do not come back together; else exponential back-off with full jitter.
 */
export function retryDelayMs(
  attempt: number,
  answer: { retryAfter?: number | undefined; rateLimitReset?: number | undefined } = {},
  now = Date.now(),
  random = Math.random,
): number {
  const askedS =
    answer.retryAfter ??
    (answer.rateLimitReset === undefined
      ? undefined
      : Math.max(0, answer.rateLimitReset - now / 1000));
  if (askedS !== undefined) return askedS * 1000 * (1 + random() * 0.1);
  const ceiling = Math.min(MAX_BACKOFF_MS, BASE_DELAY_MS * 2 ** attempt);
  return Math.max(50, random() * ceiling);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortedError(signal.reason));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortedError(signal?.reason));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

const SDK_VERSION = '0.1.0';

/** Sends the API's requests: authentication, retries, timeouts, and errors as classes. */
export class HttpClient {
  constructor(readonly options: ResolvedOptions) {}

  /**
   * The successful response, or throws the API's error. Its body is unread: with
   * `spec.stream` it is watched for stalls as it is read; else it is not watched.
   */
  send(spec: RequestSpec): Promise<Response> {
    return this.request(spec, (response, watchdog) => {
      if (spec.stream !== true || response.body === null || response.status === 204) {
        watchdog.stop();
        return response;
      }
      const body = watchdog.watchBody(response.body, this.options.requestTimeoutMs);
      return new Response(body, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    });
  }

  /** `send`, then the body as JSON (read within the request's timeout). */
  json<T>(spec: RequestSpec): Promise<T> {
    return this.request(spec, async (response, watchdog) => {
      const text = await response.text();
      watchdog.stop();
      try {
        return JSON.parse(text) as T;
      } catch (err) {
        throw new SandboxError({
          code: 'invalid_response',
          status: response.status,
          message: `The answer of ${spec.method} ${spec.path} is not JSON`,
          requestId: response.headers.get('x-request-id') ?? undefined,
          cause: err,
        });
      }
    });
  }

  /**
   * Attempts of the request, each under its own watch, until one is answered with success
   * and `read` took it; retried as `spec.retry` allows. Every failure is a SandboxError.
   */
  private async request<T>(
    spec: RequestSpec,
    read: (response: Response, watchdog: Watchdog) => T | Promise<T>,
  ): Promise<T> {
    for (let attempt = 0; ; attempt += 1) {
      const retriesLeft = spec.retry !== 'never' && attempt < this.options.maxRetries;
      const watchdog = new Watchdog(
        spec.timeoutMs ?? this.options.requestTimeoutMs,
        spec.signal,
        this.options.apiUrl,
      );
      let response: Response;
      try {
        response = await this.attempt(spec, watchdog);
        if (response.ok) return await read(response, watchdog);
      } catch (err) {
        watchdog.stop();
        const failure = watchdog.failure(err);
        if (!(failure instanceof NetworkError) || !retriesLeft || spec.retry !== 'safe') {
          throw failure;
        }
        await sleep(retryDelayMs(attempt), spec.signal);
        continue;
      }
      const error = await this.errorOf(response).finally(() => watchdog.stop());
      const retryable =
        response.status === 429 || (response.status === 503 && spec.retry === 'safe');
      // A 429 for a count held (sessions, watches) lasts until one ends: not a wait.
      if (!retriesLeft || !retryable || HELD_LIMITS.has(error.code)) throw error;
      const delay = retryDelayMs(attempt, {
        retryAfter: error.retryAfter,
        rateLimitReset: Number(response.headers.get('x-ratelimit-reset') ?? '') || undefined,
      });
      if (delay > this.options.maxRetryDelayMs) throw error;
      await sleep(delay, spec.signal);
    }
  }

  private attempt(spec: RequestSpec, watchdog: Watchdog): Promise<Response> {
    const url = new URL(`${this.options.apiUrl}${spec.path}`);
    for (const [name, value] of Object.entries(spec.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.options.apiKey}`,
      'user-agent': `sandbox-sdk/${SDK_VERSION}`,
      ...spec.headers,
    };
    const init: RequestInit & { duplex?: 'half' } = {
      method: spec.method,
      headers,
      signal: watchdog.signal,
    };
    if (spec.json !== undefined) {
      headers['content-type'] = 'application/json';
      init.body = JSON.stringify(spec.json);
    } else if (spec.body !== undefined) {
      const { body, contentType } = spec.body();
      headers['content-type'] = contentType;
      init.body = body;
      if (body instanceof ReadableStream) {
        init.body = watchdog.watchUpload(body as ReadableStream<Uint8Array>);
        // A streamed body (fetch needs to be told it will not wait for the answer first).
        init.duplex = 'half';
      }
    }
    return this.options.fetch(url, init);
  }

  private async errorOf(response: Response): Promise<SandboxError> {
    const text = await response.text().catch(() => '');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return errorFromResponse(response.status, body, {
      requestId: response.headers.get('x-request-id') ?? undefined,
      retryAfter: retryAfterSeconds(response.headers.get('retry-after')),
    });
  }
}

/** A fresh idempotency key (UUID v4) from the runtime's crypto. */
export function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}
