import type { ContextLanguage, WatchEndReason, WatchEvent } from '@sandbox/contract';

export type { WatchEvent };
import type { AdmissionStats } from './admission';
import type { EngineWatch } from './docker/engine-watch';
import type {
  EgressPolicy,
  FileListing,
  FileOperation,
  FileOperationResult,
  OutputMark,
  ProcessRef,
  RunResult,
  TerminalSpec as TerminalProgram,
} from '@sandbox/contract';
import type { PoolShapeSetting } from '@sandbox/config';
import type { LogItem, OutputPosition } from './processes/process-meta';
import type { ProcessSummary } from './processes/process-summary';

/** What the agent's gRPC handlers need from a container runtime. Docker implements it. */

/** One shape of sandbox the node keeps ready (`SANDBOX_POOL`), and how many are ready now. */
export interface PoolStatus extends PoolShapeSetting {
  ready: number;
  /** How many it keeps now: `size` at least, more while creates come faster (issue 39). */
  target: number;
  /** Creates of this shape served from the pool, and those it had no member for. */
  hits: number;
  misses: number;
}

/** How long making warm pool members took: the last one, and all of them together. */
export interface PoolRefill {
  lastMs: number;
  totalMs: number;
  made: number;
}

export interface SandboxLimits {
  memoryMb: number;
  cpu: number;
  diskMb: number;
  pids: number;
}

export interface SandboxSpec {
  sessionId: string;
  accountId: string;
  limits: SandboxLimits;
  /** Where the sandbox may connect (absent: allow-all). */
  egress?: EgressPolicy;
}

/** What a snapshot stored, and how long its source was frozen for it. */
export interface SnapshotTaken {
  bytes: number;
  filesCount: number;
  pausedMs: number;
  /** Processes are never kept on this node (runc, or gVisor without checkpoints here). */
  processesKept: false;
}

export type SandboxStatus = 'running' | 'paused' | 'missing';

export interface SandboxInfo {
  sessionId: string;
  containerId: string;
  status: SandboxStatus;
  filesCount: number;
  activeProcesses: number;
}

export interface FileContent {
  /** Relative to /workspace. */
  path: string;
  content: Buffer;
}

/** A run, as the gateway asks for it (the proto `RunSpec`; docs/architecture.md, Names). */
export interface RunSpec {
  sessionId: string;
  /** Exactly one of command and code. */
  command?: string;
  code?: string;
  env: Record<string, string>;
  workingDir: string;
  timeoutMs: number;
  files: FileContent[];
  /** The run's stdin takes input (`writeStdin`) until it exits; else it reads nothing. */
  stdin: boolean;
  /** The run's output kept in its log, at the most (the newest half at least). */
  logBytes: number;
  /** A cell of this context: code of a code context (ADR 42), a command of a shell one (ADR 59). */
  contextId?: string;
}

/** A code context (ADR 42), as the runner describes it. */
export interface CodeContextInfo {
  contextId: string;
  language: ContextLanguage;
  cwd: string;
  createdAt: string;
}

/** What to do with the session's code contexts. */
export type ContextAction =
  | {
      action: 'create';
      language: ContextLanguage;
      cwd: string;
      env: Record<string, string>;
      /** A lost context's id, made again (the agent's own restart of it). */
      contextId?: string;
    }
  | { action: 'list' }
  | { action: 'delete' | 'restart'; contextId: string };

export type { OutputMark, ProcessRef } from '@sandbox/contract';

/**
 * Receives bytes as they are produced. Returning false means "full": the producer waits until
 * the callback given to `onDrain` runs.
 */
export interface ByteSink {
  write(stream: 'stdout' | 'stderr', chunk: Buffer, mark?: OutputMark): boolean;
  onDrain(resume: () => void): void;
  /**
   * The request was accepted and its work has begun (a run's files are written and its
   * working directory is usable, and then its process runs; a file is open, `size` bytes
   * long): what fails after this is part of the outcome.
   */
  started(size?: number, process?: ProcessRef): void;
}

/** A watch's directory (relative to /workspace, "" for it) and whether it covers those under it. */
export interface WatchSpec {
  path: string;
  recursive: boolean;
}

export interface ListPage {
  offset: number;
  limit: number;
}

/** What a terminal runs (the shape the gateway sends), in which session. */
export interface TerminalSpec extends TerminalProgram {
  sessionId: string;
}

/** A terminal's program, once it runs: its input and size, and how it ended. */
export interface TerminalHandle {
  pid: number;
  /** Resolves once the terminal took the bytes (its program may hold a writer back). */
  write(data: Buffer): Promise<void>;
  resize(cols: number, rows: number): Promise<void>;
  /** The program's exit code (128 + a signal's number); rejects when the runner failed. */
  exited: Promise<number>;
}

export interface SandboxRuntime {
  /** Makes sure the image and network exist; throws service_unavailable when they cannot. */
  prepare(): Promise<void>;
  /**
   * Creates and starts the sandbox; returns the existing one for a known session. Refuses at
   * once (503, Retry-After) a create that could not be done by `deadlineAt` (epoch ms).
   */
  create(
    spec: SandboxSpec,
    options?: { deadlineAt?: number | undefined; snapshotId?: string | undefined },
  ): Promise<SandboxInfo>;
  /**
   * Stores a snapshot of the session's workspace (ADR 44), its sandbox frozen only while the
   * files are packed; processes are not kept.
   */
  snapshot(sessionId: string, snapshotId: string): Promise<SnapshotTaken>;
  /** Deletes a snapshot from the blob store (idempotent). */
  deleteSnapshot(snapshotId: string): Promise<void>;
  inspect(sessionId: string): Promise<SandboxInfo>;
  /** Removes the container and its workspace; false when nothing was there. */
  destroy(sessionId: string): Promise<boolean>;
  exec(spec: RunSpec, sink: ByteSink, signal: AbortSignal): Promise<RunResult>;
  /**
   * Starts a program on a terminal in the sandbox (its screen to `sink`); resolves once it
   * runs. The session counts as in use until it ends or `signal` hangs it up.
   */
  terminal(spec: TerminalSpec, sink: ByteSink, signal: AbortSignal): Promise<TerminalHandle>;
  /** The session's runs (live and kept), oldest first; never wakes it. */
  listProcesses(sessionId: string): ProcessSummary[];
  /**
   * A run's output from `from` to `take` (at its pace); with `follow`, until the run ended
   * and its output closed. `ref` is the process id or a pid. Never wakes the session.
   */
  readOutput(
    sessionId: string,
    ref: string,
    from: OutputPosition,
    take: (item: LogItem) => Promise<void> | void,
    options: { follow: boolean; untilExit: boolean; signal: AbortSignal },
  ): Promise<{ summary: ProcessSummary; at: OutputPosition }>;
  /** The process's summary, before reading its output. */
  process(sessionId: string, ref: string): ProcessSummary;
  /**
   * Writes to a run's stdin (or closes it), waiting at most `waitMs` for the process to take
   * it; 409 stdin_closed when it takes no input. How much it took.
   */
  writeStdin(
    sessionId: string,
    ref: string,
    input: { data: Buffer; close: boolean; waitMs: number },
  ): Promise<{ written: number; complete: boolean }>;
  /** Kills `pid` and its descendants, or every process of the session when pid is undefined. */
  kill(sessionId: string, pid: number | undefined): Promise<number[]>;
  writeFile(sessionId: string, file: FileContent): Promise<{ path: string; size: number }>;
  /**
   * Streams a file to `sink`: its size (`started`), then its bytes (as 'stdout'); returns its
   * size. An aborted `signal` stops the read.
   */
  readFile(sessionId: string, path: string, sink: ByteSink, signal: AbortSignal): Promise<number>;
  /** One page of the files under `path`, sorted, and how many there are. */
  listFiles(sessionId: string, path: string, page: ListPage): Promise<FileListing>;
  /**
   * Watches a workspace directory (ADR 60): `watching`, then its changes, to `onEvent` until
   * `signal` aborts or the watch ends; resolves with why it ended. A refusal (no such
   * directory, too many watches) rejects before `watching`. Opening it is a request of the
   * session; the open watch is not: the session may pause under it, and a deep sleep ends it.
   */
  watchFiles(
    sessionId: string,
    spec: WatchSpec,
    onEvent: (event: WatchEvent) => void,
    signal: AbortSignal,
  ): Promise<WatchEndReason>;
  /** A stat, remove, rename or mkdir of workspace entries (never through a symlink out). */
  manageFile<O extends FileOperation>(
    sessionId: string,
    operation: O,
  ): Promise<FileOperationResult<O>>;
  count(): Promise<number>;
  /**
   * Idle: freezes the sandbox's processes, unless a request of the session runs now or ended
   * less than `unusedForMs` ago (then it stays `running`).
   */
  pause(sessionId: string, unusedForMs?: number): Promise<SandboxInfo>;
  /** Thaws a paused sandbox (a no-op for a running one). */
  resume(sessionId: string): Promise<SandboxInfo>;
  /**
   * Deep sleep: saves the workspace, verifies it, removes the sandbox. Idempotent. Not while
   * the session is in use, as for `pause` (then `inUse` and nothing changed), unless
   * `evacuate`: the session leaves the node, archived to the blob store.
   */
  hibernate(
    sessionId: string,
    options?: { unusedForMs?: number; evacuate?: boolean },
  ): Promise<{ filesCount: number; bytes: number; inUse: boolean; keptDisk: boolean }>;
  /** A fresh sandbox with the saved workspace (or the running one). Idempotent. */
  restore(spec: SandboxSpec): Promise<SandboxInfo>;
  /**
   * Replaces the session's egress policy: applied to its sandbox now (connections it newly
   * forbids are cut) and kept for its next start; 404 for a session this node does not hold.
   */
  setEgress(sessionId: string, policy: EgressPolicy): Promise<SandboxInfo>;
  /**
   * Creates, lists, deletes or restarts the session's code contexts: the one acted on, or all
   * (none for delete). 404 context_not_found for an unknown id; 429 past the session's cap.
   */
  manageContexts(sessionId: string, action: ContextAction): Promise<CodeContextInfo[]>;
  /**
   * Forks of a running or idle session, one per spec (ADR 43): files copied on write, its
   * processes not (`processesKept` false). All or none; 503 when it has no sandbox (now).
   */
  fork?(
    sourceId: string,
    specs: readonly SandboxSpec[],
  ): Promise<{ sandboxes: SandboxInfo[]; processesKept: boolean }>;
  /** The sandbox's address on the sandbox network, for preview traffic; 404 when absent. */
  previewHost(sessionId: string): Promise<string>;
  /** Brings this node's sandboxes back to the state they should be in (after a crash). */
  reconcile?(): Promise<{ started: string[]; rebuilt: string[] }>;
  /** The warm pool's shapes and how many of each are ready. */
  poolStatus?(): PoolStatus[];
  /** How long making pool members took: the last one, and all of them (`/metrics`). */
  poolRefill?(): PoolRefill;
  /** The admission of cold creates: under way, waiting, refused (`/metrics`). */
  coldStartStats?(): AdmissionStats | undefined;
  /** The admission of run starts: under way, waiting, refused (`/metrics`). */
  runStartStats?(): AdmissionStats | undefined;
  /** The watch of the container engine, which the agent starts, stops and reports. */
  engine?(): EngineWatch | undefined;
  /** Releases what the runtime keeps for later (the warm pool's members). */
  stop?(): Promise<void>;
}
