import { z } from 'zod';

/** A value of a context's cell: its MIME bundle (`text/plain` always) and `isMain`. */
export const cellResultSchema = z
  .object({
    'text/plain': z.string().describe('util.inspect of the value'),
    'application/json': z.string().optional().describe('its JSON, where it serializes'),
    isMain: z.boolean().describe("the value of the cell's last expression"),
  })
  .catchall(z.union([z.string(), z.boolean()]));

export const cellErrorSchema = z.strictObject({
  name: z.string(),
  message: z.string(),
  stack: z.string(),
});

/** Spec 2.6: how a run ended, as the API answers it (and the OpenAPI document shows it). */
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
  results: z
    .array(cellResultSchema)
    .optional()
    .describe("a context's cell (contextId): its values, the last expression's first"),
  error: cellErrorSchema
    .optional()
    .describe(
      "a context's cell that threw (exitCode 1), or a shell context's command that timed out",
    ),
});

/** A cell's value as the API shows it: its MIME bundle, flat, and `isMain`. */
export type CellResultBody = Record<string, string | boolean> & { isMain: boolean };

/** Spec 2.6, typed by its schema; a cell's values by whatever MIME types they have. */
export type ExecutionResult = Omit<z.infer<typeof executionResultSchema>, 'results'> & {
  results?: CellResultBody[];
};
