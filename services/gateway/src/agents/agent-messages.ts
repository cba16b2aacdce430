import {
  isFileEntryType,
  type FileEntry,
  type FileListing,
  type LimitExceeded,
  type RunResult,
} from '@sandbox/contract';
import { AppError } from '@sandbox/errors';
import type {
  ExecEvent__Output,
  FileEntry__Output,
  ListFilesResponse__Output,
  RunResult__Output,
  Sandbox__Output,
} from '@sandbox/proto';

/*
 * The gateway's view of the agent's answers. Generated gRPC types stop in agents/: the client
 * converts each message into one of these, so that a change of the wire format is met here.
 */

/** One event of a running execution. */
export type ExecEvent =
  | { kind: 'started' }
  | { kind: 'stdout'; data: Buffer }
  | { kind: 'stderr'; data: Buffer }
  | { kind: 'result'; result: RunResult };

/** A sandbox's live counts. */
export interface SandboxInfo {
  filesCount: number;
  activeProcesses: number;
}

export function toRunResult(result: RunResult__Output): RunResult {
  return {
    exitCode: result.exitCode,
    executionTimeMs: result.executionTimeMs,
    memoryUsedBytes: result.memoryUsedBytes,
    cpuTimeMs: result.cpuTimeMs,
    timedOut: result.timedOut,
    filesWritten: result.filesWritten,
    limitsExceeded: result.limitsExceeded.map((exceeded) => ({
      limit: exceeded.limit as LimitExceeded['limit'],
      max: Number(exceeded.max),
    })),
  };
}

/** The event a message carries; undefined for a message of a kind this gateway does not know. */
export function toExecEvent(event: ExecEvent__Output): ExecEvent | undefined {
  if (event.stdout) return { kind: 'stdout', data: event.stdout.data };
  if (event.stderr) return { kind: 'stderr', data: event.stderr.data };
  if (event.result) return { kind: 'result', result: toRunResult(event.result) };
  if (event.started) return { kind: 'started' };
  return undefined;
}

export function toSandboxInfo(sandbox: Sandbox__Output): SandboxInfo {
  return { filesCount: sandbox.filesCount, activeProcesses: sandbox.activeProcesses };
}

function toFileEntry(entry: FileEntry__Output): FileEntry {
  if (!isFileEntryType(entry.type)) {
    throw new AppError('internal_error', `The node listed an entry of unknown type ${entry.type}`);
  }
  return { path: entry.path, size: entry.size, modified: entry.modified, type: entry.type };
}

export function toFileListing(listing: ListFilesResponse__Output): FileListing {
  return {
    files: listing.files.map(toFileEntry),
    total: listing.total,
    truncated: listing.truncated,
  };
}
