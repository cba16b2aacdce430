import { errorFromResponse, NetworkError, SandboxError } from './errors.js';

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
  /** The fetch to use; default: the global one. */
  fetch?: typeof fetch;
}

export interface ResolvedOptions {
  apiKey: string;
  apiUrl: string;
  maxRetries: number;
  maxRetryDelayMs: number;
  fetch: typeof fetch;
}

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
    fetch: fetchImpl,
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
      reject(signal.reason as Error);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

const SDK_VERSION = '0.1.0';

/** Sends the API's requests: authentication, retries, and errors as classes. */
export class HttpClient {
  constructor(readonly options: ResolvedOptions) {}

  /** The successful response (its body unread), or throws the API's error. */
  async send(spec: RequestSpec): Promise<Response> {
    for (let attempt = 0; ; attempt += 1) {
      const retriesLeft = spec.retry !== 'never' && attempt < this.options.maxRetries;
      let response: Response;
      try {
        response = await this.attempt(spec);
      } catch (err) {
        if (spec.signal?.aborted) throw err;
        const failure = new NetworkError({
          code: 'network_error',
          status: 0,
          message: `No answer from ${this.options.apiUrl}: ${(err as Error).message}`,
          cause: err,
        });
        if (!retriesLeft || spec.retry !== 'safe') throw failure;
        await sleep(retryDelayMs(attempt), spec.signal);
        continue;
      }
      if (response.ok) return response;
      const error = await this.errorOf(response);
      const retryable =
        response.status === 429 || (response.status === 503 && spec.retry === 'safe');
      // A 429 for the concurrent-session limit lasts until a session ends: not a wait.
      if (!retriesLeft || !retryable || error.code === 'session_limit_exceeded') throw error;
      const delay = retryDelayMs(attempt, {
        retryAfter: error.retryAfter,
        rateLimitReset: Number(response.headers.get('x-ratelimit-reset') ?? '') || undefined,
      });
      if (delay > this.options.maxRetryDelayMs) throw error;
      await sleep(delay, spec.signal);
    }
  }

  /** `send`, then the body as JSON. */
  async json<T>(spec: RequestSpec): Promise<T> {
    const response = await this.send(spec);
    return (await response.json()) as T;
  }

  private attempt(spec: RequestSpec): Promise<Response> {
    const url = new URL(`${this.options.apiUrl}${spec.path}`);
    for (const [name, value] of Object.entries(spec.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.options.apiKey}`,
      'user-agent': `sandbox-sdk/${SDK_VERSION}`,
      ...spec.headers,
    };
    const init: RequestInit & { duplex?: 'half' } = { method: spec.method, headers };
    if (spec.json !== undefined) {
      headers['content-type'] = 'application/json';
      init.body = JSON.stringify(spec.json);
    } else if (spec.body !== undefined) {
      const { body, contentType } = spec.body();
      headers['content-type'] = contentType;
      init.body = body;
      // A streamed body (fetch needs to be told it will not wait for the answer first).
      if (body instanceof ReadableStream) init.duplex = 'half';
    }
    if (spec.signal !== undefined) init.signal = spec.signal;
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
