import { posix } from 'node:path';
import { z } from 'zod';
import { AppError } from '@sandbox/errors';
import type { PlanLimits } from '../limits/plans';
import { MAX_EXECUTION_TIMEOUT_S } from '../sessions/session-limits';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const WORKSPACE = '/workspace';

export const executeBody = z.object({
  sessionId: z.string().min(1),
  code: z.string().optional(),
  command: z.string().optional(),
  files: z.array(z.unknown()).optional(),
  env: z.record(z.string(), z.string()).optional(),
  timeout: z.number().int().optional(),
  workingDir: z.string().optional(),
  stream: z.boolean().optional(),
});

export type ExecuteBody = z.output<typeof executeBody>;

export interface ExecutePlan {
  sessionId: string;
  command: string;
  env: Record<string, string>;
  workingDir: string;
  timeoutS: number;
  stream: boolean;
}

/** `workingDir` as an absolute path that stays inside /workspace. */
export function resolveWorkingDir(value: string | undefined): string {
  if (value === undefined || value === '') return WORKSPACE;
  if (value.includes('\0')) {
    throw new AppError('invalid_path', 'workingDir contains a NUL byte', {
      details: { path: value },
    });
  }
  const resolved = posix.resolve(WORKSPACE, value);
  if (resolved !== WORKSPACE && !resolved.startsWith(WORKSPACE + '/')) {
    throw new AppError('invalid_path', 'workingDir must be inside /workspace', {
      details: { path: value },
    });
  }
  return resolved;
}

/** Checks an execute request against the spec's rules and the caller's plan. */
export function planExecution(
  body: ExecuteBody,
  limits: PlanLimits,
  sessionDefaultTimeoutS: number,
): ExecutePlan {
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
  if (body.code !== undefined) {
    throw new AppError('invalid_request', 'Running code is not available yet; use command', {
      details: { field: 'code' },
    });
  }
  if (body.files !== undefined && body.files.length > 0) {
    throw new AppError('invalid_request', 'files is not available yet', {
      details: { field: 'files' },
    });
  }
  const env = body.env ?? {};
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
  const maxTimeout = Math.min(MAX_EXECUTION_TIMEOUT_S, limits.maxExecutionTimeoutS);
  const timeoutS = body.timeout ?? Math.min(sessionDefaultTimeoutS, maxTimeout);
  if (timeoutS < 1 || timeoutS > maxTimeout) {
    throw new AppError('invalid_request', `timeout must be between 1 and ${maxTimeout} seconds`, {
      details: { field: 'timeout', value: timeoutS, max: maxTimeout },
    });
  }
  return {
    sessionId: body.sessionId,
    command: body.command as string,
    env,
    workingDir: resolveWorkingDir(body.workingDir),
    timeoutS,
    stream: body.stream ?? false,
  };
}
