import { z } from 'zod';
import { AppError } from '@sandbox/errors';
import type { PlanLimits } from '../limits/plans';
import { decodeFiles, fileInput, type DecodedFile } from '../files/file-content';
import { resolveWorkingDir } from '../files/workspace-path';
import { MAX_EXECUTION_TIMEOUT_S } from '../sessions/session-limits';
import { checkContextId } from './context-id';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Linux's MAX_ARG_STRLEN: the longest argument or `NAME=value` string, NUL included. */
const MAX_ARGUMENT_BYTES = 128 * 1024;
const MAX_ENV_VARIABLE_BYTES = MAX_ARGUMENT_BYTES;
/** All of a run's `env` together, leaving room for the sandbox's own environment. */
const MAX_ENV_TOTAL_BYTES = 1024 * 1024;

export const executeBody = z.object({
  sessionId: z.string().min(1),
  code: z.string().optional(),
  command: z.string().optional(),
  files: z.array(fileInput).optional(),
  env: z
    .record(z.string(), z.string())
    .optional()
    .describe('variables for this run; at most the plan count (free 100, paid 500)'),
  timeout: z
    .number()
    .int()
    .optional()
    .describe('seconds, 1 to 300 and the plan cap; default the session timeout (30)'),
  workingDir: z.string().optional().describe('relative to /workspace; default /workspace'),
  stream: z
    .boolean()
    .optional()
    .describe(
      'Server-Sent Events instead of one JSON result: started (pid, processId) for every run whose process started, stdout and stderr, exit, result',
    ),
  stdin: z
    .boolean()
    .optional()
    .describe(
      'the run reads its stdin from POST /v1/sessions/{id}/processes/{pid}/stdin (else it reads nothing)',
    ),
  contextId: z
    .string()
    .optional()
    .describe(
      'run `code` as a cell of this code context (POST /v1/sessions/{id}/contexts): its variables stay for the next cell, and the result carries `results` and `error`; or `command` in this shell context (language bash), whose directory, variables and functions stay for the next command',
    ),
});

export type ExecuteBody = z.output<typeof executeBody>;

export type Program = { command: string } | { code: string };

/** A run as the gateway asks its agent for it (docs/architecture.md, Names), and how to answer. */
export interface RunSpec {
  sessionId: string;
  program: Program;
  files: DecodedFile[];
  env: Record<string, string>;
  workingDir: string;
  timeoutS: number;
  /** The answer streamed (SSE) rather than one JSON body: the gateway's part only. */
  stream: boolean;
  stdin: boolean;
  /** The plan's cap on the run's kept output. */
  logBytes: number;
  /** A code context's cell (ADR 42). */
  contextId?: string;
}

/** The run's environment, checked against the plan's count and what the kernel accepts. */
export function checkEnv(env: Record<string, string>, limits: PlanLimits): Record<string, string> {
  const names = Object.keys(env);
  if (names.length > limits.maxEnvVars) {
    throw new AppError('invalid_request', `At most ${limits.maxEnvVars} env variables`, {
      details: { field: 'env', count: names.length, max: limits.maxEnvVars },
    });
  }
  const badName = names.find((name) => !ENV_NAME.test(name));
  if (badName !== undefined) {
    throw new AppError('invalid_request', `Invalid env variable name "${badName}"`, {
      details: { field: 'env' },
    });
  }
  if (Object.values(env).some((value) => value.includes('\0'))) {
    throw new AppError('invalid_request', 'env values cannot contain NUL bytes', {
      details: { field: 'env' },
    });
  }
  // What the kernel lets a process start with (MAX_ARG_STRLEN per variable, and a total).
  const sizes = Object.entries(env).map(([n, v]) => Buffer.byteLength(`${n}=${v}`) + 1);
  const tooLong = sizes.findIndex((size) => size > MAX_ENV_VARIABLE_BYTES);
  if (tooLong !== -1) {
    throw new AppError('invalid_request', `env variable "${names[tooLong]}" is too long`, {
      details: { field: 'env', name: names[tooLong], max: MAX_ENV_VARIABLE_BYTES },
    });
  }
  if (sizes.reduce((sum, size) => sum + size, 0) > MAX_ENV_TOTAL_BYTES) {
    throw new AppError('invalid_request', 'env is too large in all', {
      details: { field: 'env', max: MAX_ENV_TOTAL_BYTES },
    });
  }
  return env;
}

/** Checks an execute request against the spec's rules and the caller's plan. */
export function planExecution(
  body: ExecuteBody,
  limits: PlanLimits,
  sessionDefaultTimeoutS: number,
): RunSpec {
  if (body.code !== undefined && body.command !== undefined) {
    throw new AppError('invalid_request', 'Send either code or command, not both', {
      details: { field: 'code' },
    });
  }
  if (body.code === undefined && body.command === undefined) {
    throw new AppError('invalid_request', 'Either code or command is required', {
      details: { field: 'command' },
    });
  }
  const env = checkEnv(body.env ?? {}, limits);
  if (body.command?.includes('\0') === true) {
    throw new AppError('invalid_request', 'command cannot contain NUL bytes', {
      details: { field: 'command' },
    });
  }
  // `command` is one argument of `bash -c`: the kernel's limit for one argument applies.
  if (body.command !== undefined && Buffer.byteLength(body.command) + 1 > MAX_ARGUMENT_BYTES) {
    throw new AppError(
      'invalid_request',
      `command is longer than ${MAX_ARGUMENT_BYTES - 1} bytes; write it to a file with files`,
      { details: { field: 'command', max: MAX_ARGUMENT_BYTES - 1 } },
    );
  }
  const maxTimeout = Math.min(MAX_EXECUTION_TIMEOUT_S, limits.maxExecutionTimeoutS);
  const timeoutS = body.timeout ?? Math.min(sessionDefaultTimeoutS, maxTimeout);
  if (timeoutS < 1 || timeoutS > maxTimeout) {
    throw new AppError('invalid_request', `timeout must be between 1 and ${maxTimeout} seconds`, {
      details: { field: 'timeout', value: timeoutS, max: maxTimeout },
    });
  }
  return {
    sessionId: body.sessionId,
    program: body.code !== undefined ? { code: body.code } : { command: body.command ?? '' },
    files: decodeFiles(body.files ?? [], limits),
    env,
    workingDir: resolveWorkingDir(body.workingDir),
    timeoutS,
    stream: body.stream ?? false,
    stdin: body.stdin ?? false,
    logBytes: limits.maxOutputLogBytes,
    ...(body.contextId === undefined ? {} : { contextId: cellContext(body) }),
  };
}

/**
 * A cell's context, without stdin (the context's process reads the runner's). Whether it is
 * `code` or `command` is the context's to say (its runner knows its language).
 */
function cellContext(body: ExecuteBody): string {
  if (body.stdin === true) {
    throw new AppError('invalid_request', 'A cell of a context takes no stdin', {
      details: { field: 'contextId' },
    });
  }
  return checkContextId(body.contextId ?? '');
}
