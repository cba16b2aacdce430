import {
  isFileEntryType,
  type FileEntry,
  type FileListing,
  type LimitExceeded,
  type OutputMark,
  type OutputPosition,
  type ProcessRef,
  type RunResult,
} from '@sandbox/contract';
import { CONTEXT_LANGUAGES, type CellOutcome, type ContextLanguage } from '@sandbox/contract';
import { AppError } from '@sandbox/errors';
import type {
  CellOutcome__Output,
  CodeContext__Output,
  ExecEvent__Output,
  FileEntry__Output,
  ListFilesResponse__Output,
  LogPosition__Output,
  NodeInfo__Output,
  OutputChunk__Output,
  OutputEvent__Output,
  ProcessInfo__Output,
  RunResult__Output,
  Sandbox__Output,
} from '@sandbox/proto';

/*
 * The gateway's view of the agent's messages. Generated gRPC types stop in agents/: the client
 * converts each message to or from one of these, so that a change of the wire format is met
 * here. The rest of the gateway imports these types from here (nodes/, terminals/, …).
 */

/** The shapes both sides declare once (`@sandbox/contract`), for the gateway's other modules. */
export type { OutputMark, OutputPosition, ProcessRef, TerminalSpec } from '@sandbox/contract';

/** One event of a running execution. */
export type ExecEvent =
  | { kind: 'started'; process?: ProcessRef }
  | { kind: 'stdout'; data: Buffer; mark?: OutputMark }
  | { kind: 'stderr'; data: Buffer; mark?: OutputMark }
  /** `process`: the run's process, when it started (also said here: see `ExecStarted`). */
  | { kind: 'result'; result: RunResult; process?: ProcessRef };

/** A run of the session, as the node keeps it. */
export interface ProcessRecord {
  id: string;
  pid: number;
  kind: 'command' | 'code';
  label: string;
  state: 'running' | 'exited' | 'lost';
  startedAt: string;
  exitedAt?: string;
  result?: RunResult;
  failure?: { code: string; message: string };
  stdin: boolean;
  stdinBytes: number;
  outputClosed: boolean;
  written: OutputPosition;
  keptFrom: OutputPosition;
  logBytes: number;
}

/** One event of a read of a run's output. */
export type OutputEvent =
  | { kind: 'process'; process: ProcessRecord }
  | { kind: 'stdout' | 'stderr'; data: Buffer; at: OutputPosition }
  | { kind: 'gap'; at: OutputPosition }
  | { kind: 'end'; process: ProcessRecord };

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
    ...(result.cell === null ? {} : { cell: toCellOutcome(result.cell) }),
  };
}

function toCellOutcome(cell: CellOutcome__Output): CellOutcome {
  return {
    results: cell.results.map((result) => ({ data: result.data, isMain: result.isMain })),
    ...(cell.error === null ? {} : { error: cell.error }),
  };
}

function toPosition(position: LogPosition__Output | null): OutputPosition {
  return { stdout: position?.stdout ?? 0, stderr: position?.stderr ?? 0 };
}

function toMark(chunk: OutputChunk__Output): OutputMark | undefined {
  if (chunk.process === null || chunk.at === null) return undefined;
  return { process: { id: chunk.process.id, pid: chunk.process.pid }, at: toPosition(chunk.at) };
}

/** The event a message carries; undefined for a message of a kind this gateway does not know. */
export function toExecEvent(event: ExecEvent__Output): ExecEvent | undefined {
  for (const kind of ['stdout', 'stderr'] as const) {
    const chunk = event[kind];
    if (chunk) {
      const mark = toMark(chunk);
      return { kind, data: chunk.data, ...(mark === undefined ? {} : { mark }) };
    }
  }
  if (event.result) {
    const result = toRunResult(event.result);
    const process = event.result.process;
    return process === null
      ? { kind: 'result', result }
      : { kind: 'result', result, process: { id: process.id, pid: process.pid } };
  }
  if (event.started) {
    const process = event.started.process;
    return process === null
      ? { kind: 'started' }
      : { kind: 'started', process: { id: process.id, pid: process.pid } };
  }
  return undefined;
}

export function toProcessRecord(info: ProcessInfo__Output): ProcessRecord {
  return {
    id: info.id,
    pid: info.pid,
    kind: info.kind === 'code' ? 'code' : 'command',
    label: info.label,
    state: info.state === 'exited' || info.state === 'lost' ? info.state : 'running',
    startedAt: info.startedAt,
    ...(info.exitedAt === '' ? {} : { exitedAt: info.exitedAt }),
    ...(info.result === null ? {} : { result: toRunResult(info.result) }),
    ...(info.failureCode === ''
      ? {}
      : { failure: { code: info.failureCode, message: info.failureMessage } }),
    stdin: info.stdin,
    stdinBytes: info.stdinBytes,
    outputClosed: info.outputClosed,
    written: toPosition(info.written),
    keptFrom: toPosition(info.keptFrom),
    logBytes: info.logBytes,
  };
}

/** The event a message of a read carries; undefined for a kind this gateway does not know. */
export function toOutputEvent(event: OutputEvent__Output): OutputEvent | undefined {
  if (event.process) return { kind: 'process', process: toProcessRecord(event.process) };
  for (const kind of ['stdout', 'stderr'] as const) {
    const chunk = event[kind];
    if (chunk) return { kind, data: chunk.data, at: toPosition(chunk.at) };
  }
  if (event.gap) return { kind: 'gap', at: toPosition(event.gap) };
  if (event.end) return { kind: 'end', process: toProcessRecord(event.end) };
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

/** A warm-pool shape a node reports: how many it keeps ready of sandboxes of this size. */
export interface PoolStock {
  size: number;
  ready: number;
  memoryMb: number;
  cpu: number;
  diskMb: number;
}

/** What a node said at its last heartbeat (agent NodeInfo). */
export interface NodeStatus {
  version: string;
  previewAddress: string;
  sandboxes: number;
  /** How long before its answer the node counted `sandboxes`. */
  sandboxesAgeMs: number;
  maxSandboxes: number;
  memoryTotalBytes: number;
  memoryAvailableBytes: number;
  memoryReserveBytes: number;
  cpus: number;
  loadAverage: number;
  pool: PoolStock[];
  /** Where its deep-sleeping sessions' workspaces go (see `isSharedStore`). */
  blobStore: string;
}

/** A heartbeat's answer, as placement reads it (64-bit sizes as numbers). */
export function toNodeStatus(info: NodeInfo__Output): NodeStatus {
  return {
    version: info.version,
    previewAddress: info.previewAddress,
    sandboxes: info.sandboxes,
    sandboxesAgeMs: info.sandboxesAgeMs,
    maxSandboxes: info.maxSandboxes,
    memoryTotalBytes: Number(info.memoryTotalBytes),
    memoryAvailableBytes: Number(info.memoryAvailableBytes),
    memoryReserveBytes: Number(info.memoryReserveBytes),
    cpus: info.cpus,
    loadAverage: info.loadAverage,
    pool: info.pool.map((shape) => ({
      size: shape.size,
      ready: shape.ready,
      memoryMb: shape.memoryMb,
      cpu: shape.cpu,
      diskMb: shape.diskMb,
    })),
    blobStore: info.blobStore,
  };
}

const LANGUAGES: readonly string[] = CONTEXT_LANGUAGES;

/** A code context (ADR 42) or a shell context (ADR 59), as the API shows it. */
export interface CodeContextRecord {
  contextId: string;
  language: ContextLanguage;
  cwd: string;
  createdAt: string;
}

export function toCodeContext(context: CodeContext__Output): CodeContextRecord {
  return {
    contextId: context.contextId,
    language: LANGUAGES.includes(context.language)
      ? (context.language as ContextLanguage)
      : 'typescript',
    cwd: context.workingDir,
    createdAt: context.createdAt,
  };
}
