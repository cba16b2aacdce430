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

/** A structured JSON logger with secrets redacted. */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      name: options.name,
      level: options.level ?? 'info',
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    },
    options.destination,
  );
}
