import { CommanderError } from 'commander';
import { NetworkError, SandboxError, type ApiErrorCode } from '@sandbox/sdk';

/**
 * What ended a command, its exit code and what `sandbox --help` says of it. `run`, `exec` and
 * `terminal` exit with the program's own code when it ran to its end (so 1, 3, … may be the
 * program's); the CLI's own failures use codes of sysexits(3), which programs rarely use, so
 * that a script can tell "the session is gone" from "the tests failed".
 */
export const OUTCOMES = {
  ok: { code: 0, help: 'done' },
  failure: { code: 1, help: 'a failure of the CLI itself (a local file it cannot read, …)' },
  usage: { code: 2, help: 'usage: an unknown command or option, a missing or bad argument' },
  refused: {
    code: 65,
    help: 'the API refused the request (invalid_request, conflict, file_too_large, …)',
  },
  notFound: { code: 66, help: 'not found: no such session, file or process' },
  unavailable: {
    code: 69,
    help: 'unavailable: the service was not reached or timed out (503, 502, 408, network)',
  },
  service: { code: 70, help: 'the service failed (internal_error, or a code unknown here)' },
  rateLimited: {
    code: 75,
    help: "rate limited, or the plan's concurrent sessions are all in use: retry later",
  },
  auth: { code: 77, help: 'auth: no API key, or it is unknown, revoked or not allowed' },
  timedOut: { code: 124, help: 'run, exec: the run timed out and was killed' },
  interrupted: {
    code: 130,
    help: 'interrupted (Ctrl-C): the run was killed, a throwaway session deleted',
  },
} as const satisfies Record<string, { code: number; help: string }>;

export type Outcome = keyof typeof OUTCOMES;

/** The outcome of each error code of the API (the compiler rejects a missing code). */
export const OUTCOME_OF_API_ERROR: Readonly<Record<ApiErrorCode, Outcome>> = {
  invalid_request: 'refused',
  invalid_path: 'refused',
  unauthorized: 'auth',
  forbidden: 'auth',
  not_found: 'notFound',
  session_not_found: 'notFound',
  file_not_found: 'notFound',
  process_not_found: 'notFound',
  context_not_found: 'notFound',
  context_restarted: 'refused',
  context_lost: 'refused',
  context_limit_exceeded: 'rateLimited',
  watch_limit_exceeded: 'rateLimited',
  snapshot_not_found: 'notFound',
  snapshot_quota_exceeded: 'rateLimited',
  stdin_closed: 'refused',
  conflict: 'refused',
  file_exists: 'refused',
  directory_not_empty: 'refused',
  request_timeout: 'unavailable',
  execution_timeout: 'timedOut',
  payload_too_large: 'refused',
  file_too_large: 'refused',
  rate_limit_exceeded: 'rateLimited',
  session_limit_exceeded: 'rateLimited',
  internal_error: 'service',
  bad_gateway: 'unavailable',
  service_unavailable: 'unavailable',
  disk_full: 'refused',
};

/** Codes the SDK raises itself, before or without an answer of the API. */
const OUTCOME_OF_CLIENT_ERROR: Readonly<Record<string, Outcome>> = {
  missing_api_key: 'auth',
  network_error: 'unavailable',
};

/** The outcome of an error a command threw. */
export function outcomeOf(err: unknown): Outcome {
  if (err instanceof CommanderError) return err.exitCode === 0 ? 'ok' : 'usage';
  if (err instanceof NetworkError) return 'unavailable';
  if (!(err instanceof SandboxError)) return 'failure';
  if (Object.hasOwn(OUTCOME_OF_API_ERROR, err.code)) {
    return OUTCOME_OF_API_ERROR[err.code as ApiErrorCode];
  }
  if (Object.hasOwn(OUTCOME_OF_CLIENT_ERROR, err.code)) {
    return OUTCOME_OF_CLIENT_ERROR[err.code] as Outcome;
  }
  return outcomeOfStatus(err.status);
}

/** An error code this CLI does not know yet (or an answer without one), by its HTTP status. */
function outcomeOfStatus(status: number): Outcome {
  if (status === 401 || status === 403) return 'auth';
  if (status === 404) return 'notFound';
  if (status === 429) return 'rateLimited';
  if (status === 408 || status === 502 || status === 503 || status === 504) return 'unavailable';
  if (status === 0) return 'failure'; // the SDK could not even send it (no fetch, …)
  return status < 500 ? 'refused' : 'service';
}

/** The exit code of an error a command threw. */
export function exitCodeOf(err: unknown): number {
  return OUTCOMES[outcomeOf(err)].code;
}

/** The exit codes as `sandbox --help` shows them (and packages/cli/README.md, tested). */
export function exitCodesHelp(): string {
  const [ok, ...failures] = Object.values(OUTCOMES).map(
    ({ code, help }) => `  ${String(code).padEnd(5)} ${help}`,
  );
  const own = `  ${'N'.padEnd(5)} run, exec, terminal: the program's own exit code, when it ran to its end`;
  return ['Exit codes:', ok, own, ...failures].join('\n');
}
