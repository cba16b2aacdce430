import { AsyncLocalStorage } from 'node:async_hooks';
import pino from 'pino';

export type Logger = pino.Logger;

/** Paths never written to logs, wherever they appear in a log object. */
const REDACTED_PATHS = [
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  'req.headers["x-admin-token"]',
  'req.headers["x-preview-token"]',
  '*.apiKey',
  '*.token',
  '*.env',
  '*.content',
  'apiKey',
  'token',
  'env',
  'content',
];

export interface LoggerOptions {
  name: string;
  level?: string;
  /** Where to write; defaults to stdout. Tests pass their own stream. */
  destination?: pino.DestinationStream;
}

/** The request being served, as far as its async work reaches. */
const requestScope = new AsyncLocalStorage<{ requestId: string }>();

/** Runs `work` (and all it starts) as part of request `requestId`: its log lines say so. */
export function withRequestId<T>(requestId: string, work: () => T): T {
  return requestScope.run({ requestId }, work);
}

/** The id of the request being served here; undefined outside one (a background pass). */
export function currentRequestId(): string | undefined {
  return requestScope.getStore()?.requestId;
}

/**
 * A structured JSON logger with secrets redacted. Each line written while a request is served
 * (`withRequestId`, in any service it reached) carries its `requestId`.
 */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      name: options.name,
      level: options.level ?? 'info',
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      mixin: () => {
        const requestId = currentRequestId();
        return requestId === undefined ? {} : { requestId };
      },
    },
    options.destination,
  );
}
