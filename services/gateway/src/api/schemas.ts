import { z } from 'zod';
import { CONTEXT_LANGUAGES, SESSION_ID_PATTERN } from '@sandbox/contract';
import { WEBHOOK_EVENTS, WEBHOOK_ID_PATTERN } from '../webhooks/events';
import { cellErrorSchema, cellResultSchema } from '../execute/execution-result';

/** Response shapes of the public API (spec part 2), the source of the OpenAPI document. */

export const isoTimestamp = z.iso.datetime();

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
    .describe(
      'only for "preview": {"private": true}: send it as X-Preview-Token (the session\'s info shows it again)',
    ),
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
  previewToken: z
    .string()
    .optional()
    .describe(
      "a private preview's X-Preview-Token, for the session's own account (kept sealed); absent for sessions made before it was kept",
    ),
});

export const egressSchema = z.strictObject({
  sessionId: z.string(),
  default: z.enum(['allow', 'deny']),
  allow: z.array(z.string()).describe('normalised: CIDRs to their network, domains lower-cased'),
  deny: z.array(z.string()),
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

/** The answer of a deletion: `deleted: true` and the id of what is gone, named `idField`. */
export function deletedSchema<K extends string>(idField: K) {
  const id = { [idField]: z.string() } as Record<K, z.ZodString>;
  return z.strictObject({ deleted: z.literal(true), ...id });
}

export const deleteResultSchema = deletedSchema('sessionId');

/** A code context (ADR 42), or a shell context (`bash`, ADR 59). */
export const codeContextSchema = z.strictObject({
  contextId: z.string().describe('ctx_ and 24 hex digits'),
  language: z.enum(CONTEXT_LANGUAGES),
  cwd: z.string(),
  createdAt: isoTimestamp,
});

export const contextListSchema = z.strictObject({ contexts: z.array(codeContextSchema) });

export const deletedContextSchema = deletedSchema('contextId');

/**
 * The data of a streamed run's events but its last two: `result` (the execution result) and
 * `error` (the error object of a failure after the start). The event's name is its `type`.
 */
export const executionEventSchema = z
  .discriminatedUnion('type', [
    z.strictObject({ type: z.literal('started'), pid: z.number().int(), processId: z.string() }),
    z.strictObject({ type: z.enum(['stdout', 'stderr']), data: z.string() }),
    z
      .strictObject({ type: z.literal('cell_result'), result: cellResultSchema })
      .describe("a context cell's value (display's, then the last expression's), before exit"),
    z
      .strictObject({ type: z.literal('cell_error'), error: cellErrorSchema })
      .describe("a context cell's error, before exit"),
    z.strictObject({ type: z.literal('exit'), code: z.number().int() }),
  ])
  .describe(
    'Server-Sent Events, in order: started, stdout/stderr, cell_result…, cell_error, exit, ' +
      'then result (data: the execution result) or error (data: the error object)',
  );

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

export const fileStatSchema = z.strictObject({
  path: z.string().describe('relative to /workspace, normalised; "" for the workspace itself'),
  type: z
    .enum(['file', 'directory', 'symlink', 'other'])
    .describe('a symlink is described itself, never followed'),
  size: z.number().int().min(0).describe('bytes'),
  modified: isoTimestamp,
  mode: z.number().int().min(0).describe('permission bits (mode & 0o7777), e.g. 420 = 0o644'),
});

export const removedFileSchema = z.strictObject({
  removed: z.literal(true),
  path: z.string(),
});

export const renamedFileSchema = z.strictObject({
  from: z.string(),
  to: z.string(),
});

export const madeDirectorySchema = z.strictObject({
  path: z.string(),
  created: z.boolean().describe('false when the directory was there already'),
});

export const killResultSchema = z.strictObject({
  killed: z.number().int().min(0),
  pids: z.array(z.number().int()),
});

const position = z.strictObject({
  stdout: z.number().int().min(0),
  stderr: z.number().int().min(0),
});

/** A run of a session and its kept output (issue 14). */
export const processSchema = z.strictObject({
  id: z.string().describe('proc_…: never used again, unlike a pid after a deep sleep'),
  pid: z.number().int(),
  kind: z.enum(['command', 'code']),
  command: z.string().describe("the command, or the code's first line (200 characters at most)"),
  state: z
    .enum(['running', 'exited', 'lost'])
    .describe('lost: its node restarted (or its runner died) while it ran'),
  startedAt: isoTimestamp,
  exitedAt: isoTimestamp.nullable(),
  exitCode: z.number().int().nullable(),
  timedOut: z.boolean(),
  error: z.strictObject({ code: z.string(), message: z.string() }).optional(),
  stdin: z.boolean().describe('started with stdin: true'),
  stdinBytes: z.number().int().min(0),
  outputOpen: z
    .boolean()
    .describe('more output may come: the run, or what it left running, holds its pipes'),
  stdoutBytes: z.number().int().min(0),
  stderrBytes: z.number().int().min(0),
  keptFrom: position.describe('where the kept output begins; earlier bytes went at the cap'),
  maxOutputBytes: z.number().int().describe("the plan's cap on a run's kept output"),
});

export const processListSchema = z.strictObject({ processes: z.array(processSchema) });

export const processOutputSchema = z.strictObject({
  process: processSchema,
  stdout: z.string(),
  stderr: z.string(),
  next: position.describe('the offsets to ask for next (a cut character waits for its rest)'),
  gap: z.boolean().describe('output between the offsets asked and keptFrom went at the cap'),
});

export const stdinResultSchema = z.strictObject({
  written: z.number().int().min(0),
  closed: z.boolean(),
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
    .describe(
      'true once it failed every delivery for WEBHOOK_DISABLE_AFTER_S, or its URL is refused',
    ),
  disabledReason: z
    .string()
    .optional()
    .describe(
      'only when disabled: "every delivery failed for too long" (register it again), or ' +
        '"url refused: …" (the address and why; register a public URL)',
    ),
});

export const createdWebhookSchema = webhookSchema.extend({
  secret: z.string().describe('Standard Webhooks signing secret (whsec_…), shown only here'),
});

export const webhookListSchema = z.strictObject({ data: z.array(webhookSchema) });

export const deletedWebhookSchema = deletedSchema('webhookId');

export const terminalSchema = z.strictObject({
  terminalId: z.string(),
  sessionId: z.string(),
  path: z.string().describe('the WebSocket to open, under the API base: wss://HOST/v1{path}, once'),
  token: z
    .string()
    .describe('single-use: ?token= on the WebSocket URL (browsers), or send the API key instead'),
  tokenExpiresAt: isoTimestamp,
});
