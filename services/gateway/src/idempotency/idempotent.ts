import { createHash } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { AppError } from '@sandbox/errors';
import { principalOf } from '../auth/authenticate';
import type { IdempotencyStore } from './idempotency-store';

const KEY_SHAPE = /^[\x21-\x7e]{1,255}$/;
const POLL_MS = 50;

export interface IdempotencyOptions {
  store: IdempotencyStore;
  /** How long a retry waits for the first request to finish before answering 408. */
  waitMs: number;
}

/** JSON with object keys sorted: the same body sent with its keys in another order is equal. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, child]) => child !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, child]) => `${JSON.stringify(k)}:${canonicalJson(child)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

function requestHash(req: Request): Buffer {
  return createHash('sha256')
    .update(`${req.method} ${req.baseUrl}${req.path}\n${canonicalJson(req.body ?? {})}`)
    .digest();
}

function replay(res: Response, status: number, body: string): void {
  res.status(status).type('application/json').setHeader('Idempotent-Replayed', 'true');
  res.send(body);
}

/** What an idempotent endpoint produces: a status and a JSON body. */
export interface JsonResponse {
  status: number;
  body: unknown;
}

/**
 * Makes a JSON endpoint idempotent under the `Idempotency-Key` header, across replicas: the
 * first request runs and its successful response is stored before it is sent; retries within
 * 24 h get that response byte for byte, concurrent retries wait for it. A failed first request
 * stores nothing, so a retry runs again.
 */
export function idempotent(
  options: IdempotencyOptions,
  produce: (req: Request) => Promise<JsonResponse>,
): RequestHandler {
  return async (req: Request, res: Response): Promise<void> => {
    const key = req.header('idempotency-key');
    if (key === undefined) {
      const { status, body } = await produce(req);
      res.status(status).type('application/json').send(JSON.stringify(body));
      return;
    }
    if (!KEY_SHAPE.test(key)) {
      throw new AppError('invalid_request', 'Idempotency-Key must be 1-255 printable characters', {
        details: { field: 'Idempotency-Key' },
      });
    }
    const { accountId } = principalOf(req);
    const hash = requestHash(req);
    const deadline = Date.now() + options.waitMs;
    for (;;) {
      if (await options.store.claim(accountId, key, hash)) break;
      const record = await options.store.find(accountId, key);
      if (record === undefined) continue; // released or expired meanwhile: claim again
      if (!record.requestHash.equals(hash)) {
        throw new AppError(
          'invalid_request',
          'This Idempotency-Key was used with a different request',
          {
            details: { field: 'Idempotency-Key' },
          },
        );
      }
      if (record.state === 'done') {
        replay(res, record.status, record.body);
        return;
      }
      if (Date.now() > deadline) {
        throw new AppError(
          'request_timeout',
          'A request with this Idempotency-Key is still running',
          {
            details: { field: 'Idempotency-Key' },
          },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }

    // This request owns the key.
    let response: JsonResponse;
    try {
      response = await produce(req);
    } catch (err) {
      await options.store.release(accountId, key);
      throw err;
    }
    const text = JSON.stringify(response.body);
    await options.store.complete(accountId, key, response.status, text);
    res.status(response.status).type('application/json').send(text);
  };
}
