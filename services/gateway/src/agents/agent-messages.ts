import type { LimitExceeded, RunResult } from '@sandbox/contract';
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

/** A file of a listing (spec 4.8): the node lists files only, so every entry is a file. */
export interface FileEntry {
  path: string;
  size: number;
  modified: string;
  type: 'file';
}

/** One page of a listing, with the total; `truncated` when the node stopped at its cap. */
export interface FileListing {
  files: FileEntry[];
  total: number;
  truncated: boolean;
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
  return { path: entry.path, size: entry.size, modified: entry.modified, type: 'file' };
}

export function toFileListing(listing: ListFilesResponse__Output): FileListing {
  return {
    files: listing.files.map(toFileEntry),
    total: listing.total,
    truncated: listing.truncated,
  };
}
