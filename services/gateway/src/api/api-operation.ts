import type { z } from 'zod';
import type { ErrorCode } from '@sandbox/errors';
import type { Principal, Scope } from '../auth/principal';

/** One operation of the public API: its route, schemas, scope, answers (operations.ts). */
export interface ApiOperation {
  method: 'get' | 'post' | 'put' | 'delete';
  /** Express path under /v1. */
  path: string;
  summary: string;
  /** Scope a key needs; none means the operation is public. */
  scope?: Scope;
  /** The request body's schema: validates it (operation-route.ts) and documents it. */
  body?: z.ZodType;
  /** The query string's schema, likewise. */
  query?: z.ZodType;
  /**
   * A check of the body that needs the caller's plan, run before the schema so that its more
   * specific answer wins (createSession's ttl: field, value and the plan's maximum).
   */
  precheck?: (body: unknown, principal: Principal) => void;
  idempotent?: boolean;
  /** Takes `Last-Event-ID`: a stream's reconnect (answered 204 when the stream was complete). */
  resumable?: boolean;
  success: {
    status: number;
    schema: z.ZodType;
    description: string;
    /** Also Server-Sent Events: `true`, or the schema of their data. */
    eventStream?: true | z.ZodType;
    /** The body is raw bytes, not JSON. */
    raw?: boolean;
    /** Only Server-Sent Events (`eventStream`), never a JSON body. */
    streamOnly?: boolean;
  };
  /**
   * Error codes this operation can answer with, besides the ones every call can, 403 forbidden
   * (a key without the scope) and 400 invalid_request (the validator refusing a body or query).
   */
  errors: readonly ErrorCode[];
}

/** Errors any authenticated call can answer with. */
export const COMMON_ERRORS: readonly ErrorCode[] = [
  'unauthorized',
  'rate_limit_exceeded',
  'internal_error',
  'service_unavailable', // Postgres or Redis out of reach
];
