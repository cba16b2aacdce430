import { AppError } from '@sandbox/errors';
import { runDeadlines, type RunResult } from '@sandbox/contract';
import type { CellOutcome } from '@sandbox/contract';
import type { AgentClient } from '../agents/agent-client';
import type { OutputMark, ProcessRef } from '../agents/agent-messages';
import type { FlowControl } from '../agents/agent-streams';
import type { Principal } from '../auth/principal';
import type { SessionAccess } from '../sessions/session-access';
import type { SessionResourceLimits } from '../sessions/session-limits';
import type { Logger } from '@sandbox/logger';
import { announcingDiskFull } from '../webhooks/disk-full';
import type { WebhookStore } from '../webhooks/webhook-store';
import { planExecution, type ExecuteBody, type RunSpec } from './execute-request';
import type { ExecutionResult } from './execution-result';
import { OutputBuffer } from './output-buffer';

/** The API's form of a cell's outcome: MIME types as keys beside `isMain`. */
export function cellBody(cell: CellOutcome): Pick<ExecutionResult, 'results' | 'error'> {
  return {
    results: cell.results.map((result) => ({ ...result.data, isMain: result.isMain })),
    ...(cell.error === undefined ? {} : { error: cell.error }),
  };
}

/** Output kept per stream of a non-streamed run. */
export const MAX_COLLECTED_OUTPUT_BYTES = 16 * 1024 * 1024;

export type StreamEvent =
  | { type: 'stdout'; data: string }
  | { type: 'stderr'; data: string }
  | { type: 'exit'; code: number };

/** Follows a run as it happens (streamed executions). */
export interface RunObserver {
  /**
   * The run began (its files are written; then, with `process`, its process runs): errors
   * before this are the request's, not the run's. Called again with `process` when it is
   * learnt later (after a package install, or with the result of a run that said nothing).
   */
  started(process?: ProcessRef): void;
  /**
   * A chunk of output, and where it ends in the run's log; `flow.pause()` holds the run's
   * output until `flow.resume()`.
   */
  output(stream: 'stdout' | 'stderr', data: Buffer, flow: FlowControl, mark?: OutputMark): void;
}

/** Spec 2.6 from what the node reported and the output collected. */
export function executionResult(
  result: RunResult,
  stdout: OutputBuffer,
  stderr: OutputBuffer,
): ExecutionResult {
  return {
    stdout: stdout.text(),
    stderr: stderr.text(),
    exitCode: result.exitCode,
    executionTime: result.executionTimeMs,
    memoryUsed: result.memoryUsedBytes,
    cpuTime: result.cpuTimeMs,
    timedOut: result.timedOut,
    filesWritten: result.filesWritten,
    ...(stdout.truncated || stderr.truncated ? { outputTruncated: true as const } : {}),
    ...(result.cell === undefined ? {} : cellBody(result.cell)),
  };
}

export interface PreparedExecution {
  spec: RunSpec;
  agent: AgentClient;
  accountId: string;
  limits: SessionResourceLimits;
}

export class ExecuteService {
  /** Webhook events of finished runs being recorded after their answer. */
  private readonly announcing = new Set<Promise<void>>();

  constructor(
    private readonly access: SessionAccess,
    private readonly webhooks: WebhookStore,
    private readonly logger: Logger,
  ) {}

  /** Validates the request and finds the session (counting as activity). */
  async prepare(principal: Principal, body: ExecuteBody): Promise<PreparedExecution> {
    // A request the plan refuses does not wake the session.
    const { session, agent, vetted } = await this.access.open(principal, body.sessionId, (found) =>
      planExecution(body, principal.limits, found.resourceLimits.timeout),
    );
    return {
      spec: vetted,
      agent,
      accountId: principal.accountId,
      limits: session.resourceLimits,
    };
  }

  /**
   * Runs the execution, telling `observer` when its process started and each chunk of output
   * as it arrives (`flow.pause()` holds the run's output until `flow.resume()`), and returns the
   * collected result (output capped at MAX_COLLECTED_OUTPUT_BYTES per stream).
   */
  async run(
    { spec, agent, accountId, limits }: PreparedExecution,
    signal: AbortSignal,
    observer?: RunObserver,
  ): Promise<ExecutionResult> {
    const stdout = new OutputBuffer(MAX_COLLECTED_OUTPUT_BYTES);
    const stderr = new OutputBuffer(MAX_COLLECTED_OUTPUT_BYTES);
    let result: RunResult | undefined;
    // A running execution is activity: the session must not go idle under it.
    const stopKeepingActive = this.access.keepActiveWhile(spec.sessionId);
    try {
      await announcingDiskFull(
        this.webhooks,
        this.logger,
        { accountId, id: spec.sessionId, diskMb: limits.disk },
        () => this.exec(agent, spec, signal, stdout, stderr, observer, (r) => (result = r)),
      );
    } catch (err) {
      // A session deleted (or expired) under its run: the run's sandbox is gone for good.
      if (err instanceof AppError && err.code === 'service_unavailable') {
        await this.access.ensureExists({ accountId }, spec.sessionId);
      }
      throw err;
    } finally {
      stopKeepingActive();
    }
    if (result === undefined)
      throw new AppError('internal_error', 'The run ended without a result');
    // Recorded while the answer is on its way: the caller does not wait for the outbox's row.
    const announced = this.announce(accountId, spec.sessionId, limits, result);
    this.announcing.add(announced);
    void announced.finally(() => this.announcing.delete(announced));
    return executionResult(result, stdout, stderr);
  }

  /** Waits for the webhook events of finished runs to be recorded (a gateway's stop). */
  async settle(): Promise<void> {
    await Promise.all([...this.announcing]);
  }

  /** Webhook events of a finished run; a failure to record them does not fail the run. */
  private async announce(
    accountId: string,
    sessionId: string,
    limits: SessionResourceLimits,
    result: RunResult,
  ): Promise<void> {
    try {
      await this.webhooks.enqueue(accountId, 'execution.completed', {
        sessionId,
        exitCode: result.exitCode,
        timedOut: result.timedOut,
        executionTime: result.executionTimeMs,
        memoryUsed: result.memoryUsedBytes,
        cpuTime: result.cpuTimeMs,
      });
      for (const exceeded of result.limitsExceeded ?? []) {
        await this.webhooks.enqueue(accountId, 'resource_limit.exceeded', {
          sessionId,
          limit: exceeded.limit,
          // The session's own numbers (the agent sees the disk's usable size, a bit less).
          max:
            exceeded.limit === 'memory'
              ? limits.memory
              : exceeded.limit === 'disk'
                ? limits.disk
                : exceeded.max,
        });
      }
    } catch (err) {
      this.logger.error({ err, sessionId }, 'could not record webhook events of a run');
    }
  }

  private async exec(
    agent: AgentClient,
    spec: RunSpec,
    signal: AbortSignal,
    stdout: OutputBuffer,
    stderr: OutputBuffer,
    observer: RunObserver | undefined,
    onResult: (result: RunResult) => void,
  ): Promise<void> {
    await agent.exec(
      {
        sessionId: spec.sessionId,
        ...spec.program,
        files: spec.files,
        env: spec.env,
        workingDir: spec.workingDir,
        timeoutMs: spec.timeoutS * 1000,
        stdin: spec.stdin,
        logBytes: spec.logBytes,
        contextId: spec.contextId ?? '',
      },
      {
        onEvent: (event, flow) => {
          if (event.kind === 'stdout' || event.kind === 'stderr') {
            (event.kind === 'stdout' ? stdout : stderr).push(event.data);
            observer?.output(event.kind, event.data, flow, event.mark);
          } else if (event.kind === 'result') {
            // A run that printed nothing and ended at once is named only here.
            if (event.process !== undefined) observer?.started(event.process);
            onResult(event.result);
          } else {
            observer?.started(event.process);
          }
        },
      },
      runDeadlines(spec.timeoutS * 1000).gatewayMs,
      signal,
    );
  }
}

/** decisions.md: a non-streamed run past its timeout is 408 with the partial output. */
export function timeoutError(result: ExecutionResult, timeoutS: number): AppError {
  return new AppError('execution_timeout', `Execution exceeded its timeout of ${timeoutS}s`, {
    details: { timeout: timeoutS, executionTime: result.executionTime },
    fields: { stdout: result.stdout, stderr: result.stderr },
  });
}
