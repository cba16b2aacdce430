import type { ErrorCode } from '@sandbox/errors';

/**
 * The runner's protocol: one JSON object per line on its stdin (requests) and stdout (events),
 * every event carrying the id of the request it answers. Bytes travel base64-encoded.
 */

export interface FileInput {
  path: string;
  /** base64 */
  content: string;
}

export type RunnerRequest =
  | {
      id: number;
      op: 'exec';
      command?: string;
      code?: string;
      env: Record<string, string>;
      cwd: string;
      timeoutMs: number;
      files?: FileInput[];
    }
  | { id: number; op: 'cancel'; target: number }
  | { id: number; op: 'kill'; pid?: number }
  | { id: number; op: 'stats' }
  | { id: number; op: 'writeFile'; path: string; content: string }
  | { id: number; op: 'readFile'; path: string }
  | { id: number; op: 'listFiles'; path: string; limit: number }
  | { id: number; op: 'ping' };

export interface ExecResultEvent {
  exitCode: number;
  executionTimeMs: number;
  memoryUsedBytes: number;
  cpuTimeMs: number;
  timedOut: boolean;
  filesWritten: string[];
}

export interface FileEntry {
  path: string;
  size: number;
  modified: string;
  type: 'file';
}

export type RunnerEvent =
  | { id: number; ev: 'stdout' | 'stderr' | 'chunk'; data: string }
  | ({ id: number; ev: 'exec' } & ExecResultEvent)
  | { id: number; ev: 'killed'; pids: number[] }
  | { id: number; ev: 'stats'; filesCount: number; activeProcesses: number }
  | { id: number; ev: 'written'; path: string; size: number }
  | { id: number; ev: 'read'; size: number }
  | { id: number; ev: 'listed'; files: FileEntry[]; truncated: boolean }
  | { id: number; ev: 'pong'; pid: number }
  | {
      id: number;
      ev: 'error';
      code: ErrorCode;
      message: string;
      details?: Record<string, unknown>;
    };

/** The events that end a request. */
export const FINAL_EVENTS = new Set([
  'exec',
  'killed',
  'stats',
  'written',
  'read',
  'listed',
  'pong',
  'error',
]);

/** A failure the runner reports to the agent with a code of the service's table. */
export class RunnerError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'RunnerError';
  }
}
