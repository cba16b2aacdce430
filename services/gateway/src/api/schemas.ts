import { z } from 'zod';
import { SESSION_ID_PATTERN } from '@sandbox/contract';
import { WEBHOOK_EVENTS, WEBHOOK_ID_PATTERN } from '../webhooks/events';

/** Response shapes of the public API (spec part 2), the source of the OpenAPI document. */

const isoTimestamp = z.iso.datetime();

export const resourceLimitsSchema = z.strictObject({
  memory: z.number().int().describe('MB'),
  cpu: z.number().describe('CPU cores'),
  timeout: z.number().int().describe('default execution timeout, seconds'),
  disk: z.number().int().describe('MB'),
});

export const sessionSchema = z.strictObject({
  sessionId: z.string().regex(SESSION_ID_PATTERN),
  expiresAt: isoTimestamp,
  previewUrl: z.string(),
  createdAt: isoTimestamp,
  resourceLimits: resourceLimitsSchema,
  previewToken: z
    .string()
    .optional()
    .describe('only for "preview": {"private": true}: send it as X-Preview-Token; shown once'),
});

export const sessionStateSchema = z.enum(['active', 'idle', 'deep-sleep']);

export const sessionInfoSchema = z.strictObject({
  sessionId: z.string(),
  createdAt: isoTimestamp,
  expiresAt: isoTimestamp,
  lastActive: isoTimestamp,
  state: sessionStateSchema,
  previewUrl: z.string().describe('as at creation (an addition to spec 2.3)'),
  filesCount: z.number().int().min(0),
  activeProcesses: z.number().int().min(0),
  metadata: z.record(z.string(), z.unknown()),
});

export const paginationSchema = z.strictObject({
  total: z.number().int().min(0),
  limit: z.number().int().min(1),
  offset: z.number().int().min(0),
  hasMore: z.boolean(),
});

export const sessionListSchema = z.strictObject({
  data: z.array(
    sessionSchema.extend({
      lastActive: isoTimestamp,
      state: sessionStateSchema,
      metadata: z.record(z.string(), z.unknown()),
    }),
  ),
  pagination: paginationSchema,
});

export const deleteResultSchema = z.strictObject({
  deleted: z.literal(true),
  sessionId: z.string(),
});

export const executionResultSchema = z.strictObject({
  stdout: z.string(),
  stderr: z.string(),
  exitCode: z.number().int(),
  executionTime: z.number().int().min(0).describe('milliseconds'),
  memoryUsed: z.number().int().min(0).describe('peak bytes'),
  cpuTime: z.number().int().min(0).describe('CPU milliseconds'),
  timedOut: z.boolean(),
  filesWritten: z.array(z.string()).optional(),
  outputTruncated: z
    .literal(true)
    .optional()
    .describe('present when output past 16 MB per stream was dropped (non-streamed runs)'),
});

/** Spec part 7, for one set of codes. */
export function errorBodySchema(codes: readonly [string, ...string[]]) {
  return z.strictObject({
    error: z.strictObject({
      code: z.enum(codes),
      message: z.string(),
      details: z.record(z.string(), z.unknown()).optional(),
      retryAfter: z.number().int().min(0).optional(),
      stdout: z.string().optional(),
      stderr: z.string().optional(),
    }),
  });
}

export const writeFileResultSchema = z.strictObject({
  path: z.string(),
  size: z.number().int().min(0),
});

export const fileEntrySchema = z.strictObject({
  path: z.string(),
  size: z.number().int().min(0),
  modified: isoTimestamp,
  type: z.literal('file'),
});

export const fileListSchema = z.strictObject({
  files: z.array(fileEntrySchema),
  truncated: z.literal(true).optional(),
  pagination: paginationSchema.optional(),
});

export const killResultSchema = z.strictObject({
  killed: z.number().int().min(0),
  pids: z.array(z.number().int()),
});

/** Raw file bytes. */
export const rawBytesSchema = z.string().describe('the raw bytes of the file');

const webhookEvents = z.array(z.enum(WEBHOOK_EVENTS));

export const webhookSchema = z.strictObject({
  id: z.string().regex(WEBHOOK_ID_PATTERN),
  url: z.string(),
  events: webhookEvents,
  createdAt: isoTimestamp,
  disabled: z
    .boolean()
    .describe('true once it failed every delivery for WEBHOOK_DISABLE_AFTER_S: register it again'),
});

export const createdWebhookSchema = webhookSchema.extend({
  secret: z.string().describe('Standard Webhooks signing secret (whsec_…), shown only here'),
});

export const webhookListSchema = z.strictObject({ data: z.array(webhookSchema) });

export const deletedWebhookSchema = z.strictObject({
  deleted: z.literal(true),
  webhookId: z.string(),
});

export const terminalSchema = z.strictObject({
  terminalId: z.string(),
  sessionId: z.string(),
  path: z.string().describe('the WebSocket to open, under the API base: wss://HOST/v1{path}, once'),
  token: z
    .string()
    .describe('single-use: ?token= on the WebSocket URL (browsers), or send the API key instead'),
  tokenExpiresAt: isoTimestamp,
});
