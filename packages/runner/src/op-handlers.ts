import type { CodeContexts } from './contexts';
import type { RunHandle } from './exec';
import type { RunSink } from './run-output';
import type { Flow, OutputChannel } from './output-channel';
import type { RunnerRequest, RunSpec } from './protocol';
import type { RunStdin } from './spawner';

export type RunnerOp = RunnerRequest['op'];

/** The request of one op (`pause` and `resume` share one shape). */
export type RequestOf<Op extends RunnerOp, R extends RunnerRequest = RunnerRequest> = R extends {
  op: infer Ops;
}
  ? Op extends Ops
    ? R
    : never
  : never;

/** The state the op handlers share: what the runner has under way, and its output. */
export interface RunnerContext {
  readonly channel: OutputChannel;
  /** Runs under way, by request id. */
  readonly runs: Map<number, RunHandle>;
  /** Requests whose output the agent can hold and resume, or stop: runs and file reads. */
  readonly flows: Map<number, Flow>;
  /** Terminals (and runs) that take input, by request id. */
  readonly inputs: Map<number, RunStdin>;
  /** Runs being prepared (files snapshot, transpile), and whether a cancel came meanwhile. */
  readonly starting: Map<number, boolean>;
  /** The runner itself and the container's keep-alive: never counted as the user's. */
  readonly infrastructure: ReadonlySet<number>;
  /** The runner's front, when it started this runner: it and its helpers are infrastructure. */
  readonly front: number | undefined;
  /** The session's code contexts (ADR 42). */
  readonly contexts: CodeContexts;
  /** Starts a code run (exec.ts's startRun; tests pass their own). */
  startRun(spec: RunSpec, sink: RunSink): Promise<RunHandle>;
}

/** Answers one request: emits its events, the last one final; a throw becomes an error event. */
export type OpHandler<Op extends RunnerOp> = (
  context: RunnerContext,
  request: RequestOf<Op>,
) => Promise<void>;

/** One handler per op of the protocol: the compiler rejects a missing one. */
export type OpHandlers = { [Op in RunnerOp]: OpHandler<Op> };
