/*
 * What a run produces, from the runner inside the sandbox to the HTTP answer. No imports: the
 * compiled file is copied into the sandbox image beside the runner.
 */

/** The unprivileged user every sandbox process runs as (built into the sandbox image). */
export const SANDBOX_UID = 1000;
export const SANDBOX_GID = 1000;

/** Exit code of a run ended by its timeout (as coreutils `timeout`). */
export const TIMEOUT_EXIT_CODE = 124;

/**
 * Where a sandbox finds the `cgroup.procs` file of its session's CPU group (the agent mounts
 * it; absent where the node does not split CPU): the runner moves user processes into it.
 */
export const USER_CPU_PROCS = '/run/sandbox/cpu.procs';

/**
 * Where a sandbox's runner finds the agent's socket for it (ADR 33): a directory of the host
 * that the agent binds read-only, owned by the sandbox's root and closed to the sandbox user.
 * Absent where the node does not link runners (a sandbox on a kernel of its own): the runner
 * then speaks over its `docker exec` stream.
 */
export const RUNNER_LINK_DIR = '/run/sandbox/link';

/** The agent's socket in RUNNER_LINK_DIR, there while a runner of the sandbox is starting. */
export const RUNNER_LINK_SOCKET = 'agent.sock';

/**
 * The runner's environment when it is to reach the agent's socket: the socket's path, and the
 * token it says first (the agent takes that launch's runner only). The runner removes both
 * from its environment before anything else: no run inherits them.
 */
export const RUNNER_LINK_ENV = {
  socket: 'SANDBOX_AGENT_SOCKET',
  token: 'SANDBOX_AGENT_TOKEN',
} as const;

/**
 * The runner's front (packages/runner/front, ADR 34): what the agent starts in a sandbox of an
 * image that has it. It starts the runner's Node as its child: the front and its helpers are
 * the runner's, never the user's.
 */
export const RUNNER_FRONT_PATH = '/opt/sandbox/runner/front';

/** Paths reported in `filesWritten` at the most. */
export const MAX_FILES_WRITTEN = 1000;

/** The longest run timeout any plan allows (spec: 300 s). */
export const MAX_RUN_TIMEOUT_MS = 300_000;

/** A session limit a run ran into (reported to the gateway, which sends the webhook event). */
export interface LimitExceeded {
  limit: 'memory' | 'disk' | 'processes';
  /** MB for memory and disk, a count for processes. */
  max: number;
}

/** One value of a code context's cell (ADR 42), in every form it has: `text/plain` always. */
export interface CellResult {
  /** MIME type → content (JSON as its text). */
  data: Record<string, string>;
  /** The value of the cell's last expression. */
  isMain: boolean;
}

/** What a cell threw (or left rejected). */
/** A context's languages: code contexts (ADR 42), and `bash` for a shell context (ADR 59). */
export const CONTEXT_LANGUAGES = ['typescript', 'javascript', 'bash'] as const;

export type ContextLanguage = (typeof CONTEXT_LANGUAGES)[number];

export interface CellError {
  name: string;
  message: string;
  stack: string;
}

/** What a cell produced, besides its output. */
export interface CellOutcome {
  results: CellResult[];
  error?: CellError;
}

/** The result of one run, the same from the runner to the gateway's HTTP layer. */
export interface RunResult {
  exitCode: number;
  executionTimeMs: number;
  memoryUsedBytes: number;
  cpuTimeMs: number;
  timedOut: boolean;
  /** Relative to /workspace: the request's files, then what the run created or changed. */
  filesWritten: string[];
  /** Session limits the run ran into; set by the agent, which reads the cgroup counters. */
  limitsExceeded?: LimitExceeded[];
  /** A cell of a code context: its values and error. */
  cell?: CellOutcome;
}

/** The deadlines each layer derives from one run's timeout. */
export interface RunDeadlines {
  /** The runner stops the run's process tree. */
  runnerMs: number;
  /** The agent gives up on a runner that missed the timeout and restarts it. */
  agentGuardMs: number;
  /** The gateway abandons the agent call: only after the agent's guard had its chance. */
  gatewayMs: number;
}

/** Time the runner gets past a run's timeout to stop the tree, list written files and report. */
const AGENT_GUARD_MARGIN_MS = 7_000;
/** Time the agent gets past its own guard to answer (closing the runner included). */
const GATEWAY_MARGIN_MS = 3_000;

/** One place computes every layer's deadline, so that they fire in order: runner, agent, gateway. */
export function runDeadlines(timeoutMs: number): RunDeadlines {
  const runnerMs = Math.min(Math.max(timeoutMs, 1), MAX_RUN_TIMEOUT_MS);
  const agentGuardMs = runnerMs + AGENT_GUARD_MARGIN_MS;
  return { runnerMs, agentGuardMs, gatewayMs: agentGuardMs + GATEWAY_MARGIN_MS };
}

/** `filesWritten` as reported: no duplicates, at most MAX_FILES_WRITTEN. */
export function cappedFilesWritten(paths: Iterable<string>): string[] {
  return [...new Set(paths)].slice(0, MAX_FILES_WRITTEN);
}
