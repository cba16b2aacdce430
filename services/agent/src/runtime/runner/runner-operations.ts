import {
  cappedFilesWritten,
  runDeadlines,
  TIMEOUT_EXIT_CODE,
  type RunResult,
} from '@sandbox/contract';
import { AppError } from '@sandbox/errors';
import type { Logger } from '@sandbox/logger';
import type { Admission } from '../admission';
import { InstallFailed, type PackageInstaller } from '../packages/package-installer';
import { importedPackages, type RunnerEvent } from '@sandbox/runner';
import type { ProcessLog } from '../processes/process-log';
import type { ProcessLogs } from '../processes/process-logs';
import type { RunnerClient } from './runner-client';
import type { ByteSink, FileContent, ProcessRef, RunSpec } from '../sandbox-runtime';

function failedRun(
  exitCode: number,
  started: number,
  filesWritten: string[],
  timedOut = false,
): RunResult {
  return {
    exitCode,
    executionTimeMs: Date.now() - started,
    memoryUsedBytes: 0,
    cpuTimeMs: 0,
    timedOut,
    filesWritten,
  };
}

export interface ExecDeps {
  runner: RunnerClient;
  installer: PackageInstaller;
  logger: Logger;
  /** Where each run's output is kept. */
  logs: ProcessLogs;
  /** The node's admission of run starts (issue 39); none: every run starts at once. */
  starts?: Admission | undefined;
}

/** Writes the request's files (all or none); the paths written. */
async function writeRequestFiles(runner: RunnerClient, files: FileContent[]): Promise<string[]> {
  if (files.length === 0) return [];
  const { files: written } = await runner.request(
    {
      op: 'writeFiles',
      files: files.map((f) => ({ path: f.path, content: f.content.toString('base64') })),
    },
    'written',
  );
  return written.map((f) => f.path);
}

/**
 * Installs the packages `code` imports that are missing, from the node's cache. Undefined when
 * it went well; else the run's outcome (an install failure is the run's own result). Code that
 * names no package (by the runner's own scan) costs no round trip to the runner: most cells.
 */
export async function installMissing(
  { runner, installer }: ExecDeps,
  spec: RunSpec & { code: string },
  sink: ByteSink,
  run: { started: number; written: string[] },
): Promise<RunResult | undefined> {
  if (importedPackages(spec.code).length === 0) return undefined;
  const { packages } = await runner.request(
    { op: 'missingPackages', code: spec.code, cwd: spec.workingDir },
    'packages',
  );
  if (packages.length === 0) return undefined;
  // The request is valid; an install failure is the run's own outcome.
  sink.started();
  try {
    const bundle = await installer.bundle(packages, spec.timeoutMs - (Date.now() - run.started));
    await runner
      .request(
        { op: 'installBundle', cwd: spec.workingDir, bundle: bundle.toString('base64') },
        'installed',
      )
      .catch((err: unknown) => {
        // A full disk is the session's 507; any other unpack failure is the run's result.
        if (err instanceof AppError && err.code === 'internal_error') {
          throw new InstallFailed(`${err.message}\n`, false);
        }
        throw err;
      });
    return undefined;
  } catch (err) {
    if (!(err instanceof InstallFailed)) throw err;
    sink.write('stderr', Buffer.from(err.message));
    return err.timedOut
      ? failedRun(TIMEOUT_EXIT_CODE, run.started, run.written, true)
      : failedRun(1, run.started, run.written);
  }
}

/**
 * One run: the request's files (all or none), then for code the packages it imports that are
 * missing (installed from the node's cache), then the command or code itself, streaming its
 * output to `sink` and its log. Installing counts toward the run's timeout.
 */
export async function exec(deps: ExecDeps, spec: RunSpec, sink: ByteSink): Promise<RunResult> {
  const started = Date.now();
  // Before anything is written: a run refused on a saturated node (503) leaves nothing. Its
  // turn ends when its process has started (or it ended before).
  const admitted = (await deps.starts?.enter(started + spec.timeoutMs)) ?? (() => undefined);
  try {
    return await execAdmitted(deps, spec, sink, started, admitted);
  } finally {
    admitted();
  }
}

async function execAdmitted(
  deps: ExecDeps,
  spec: RunSpec,
  sink: ByteSink,
  started: number,
  onProcessStarted: () => void,
): Promise<RunResult> {
  const { runner, logger } = deps;
  const written = await writeRequestFiles(runner, spec.files);
  if (spec.code !== undefined) {
    const failed = await installMissing(deps, { ...spec, code: spec.code }, sink, {
      started,
      written,
    });
    if (failed !== undefined) return failed;
  }
  const remainingMs = spec.timeoutMs - (Date.now() - started);
  if (remainingMs <= 0) return failedRun(TIMEOUT_EXIT_CODE, started, written, true);

  const guard = setTimeout(() => {
    logger.error({ sessionId: spec.sessionId }, 'the runner missed a run timeout; restarting it');
    runner.close();
  }, runDeadlines(remainingMs).agentGuardMs);
  const log = new RunLog(deps.logs, spec, onProcessStarted);
  try {
    const result = await runToResult(runner, spec, remainingMs, sink, log);
    const outcome: RunResult = {
      exitCode: result.exitCode,
      executionTimeMs: Date.now() - started,
      memoryUsedBytes: result.memoryUsedBytes,
      cpuTimeMs: result.cpuTimeMs,
      timedOut: result.timedOut,
      filesWritten: cappedFilesWritten([...written, ...result.filesWritten]),
      ...(result.cell === undefined ? {} : { cell: result.cell }),
    };
    log.current?.exited({ result: outcome });
    return outcome;
  } catch (err) {
    const failure = err instanceof AppError ? err : new AppError('internal_error', 'Run failed');
    log.current?.exited({ failure: { code: failure.code, message: failure.message } });
    throw err;
  } finally {
    clearTimeout(guard);
  }
}

/** The log of a run, begun once its process started. */
class RunLog {
  current: ProcessLog | undefined;

  constructor(
    private readonly logs: ProcessLogs,
    private readonly spec: RunSpec,
    private readonly onBegin: () => void = () => undefined,
  ) {}

  begin(pid: number): ProcessLog {
    const { spec } = this;
    this.onBegin();
    this.current = this.logs.start({
      sessionId: spec.sessionId,
      pid,
      kind: spec.code === undefined ? 'command' : 'code',
      source: spec.code ?? spec.command ?? '',
      stdin: spec.stdin,
      capBytes: spec.logBytes,
    });
    return this.current;
  }
}

type ResultEvent = Extract<RunnerEvent, { ev: 'result' }>;

/**
 * The run itself: its output to its log and to `sink` (at the sink's pace) until its process
 * exits; then what background processes write to its pipes, to its log only, until they let
 * go. Its client going away does not stop it: it runs to its end or its timeout.
 */
function runToResult(
  runner: RunnerClient,
  spec: RunSpec,
  timeoutMs: number,
  sink: ByteSink,
  log: RunLog,
): Promise<ResultEvent> {
  return new Promise<ResultEvent>((resolve, reject) => {
    let requestId = 0;
    let ref: ProcessRef | undefined;
    let ended = false;
    runner
      .request(
        {
          op: 'exec',
          ...(spec.code === undefined ? { command: spec.command ?? '' } : { code: spec.code }),
          env: spec.env,
          cwd: spec.workingDir,
          timeoutMs,
          ...(spec.stdin ? { stdin: true } : {}),
          ...(spec.contextId === undefined ? {} : { contextId: spec.contextId }),
        },
        'exec',
        {
          onSent: (id) => (requestId = id),
          onEvent: (event, resume) => {
            if (event.ev === 'started') {
              const started = log.begin(event.pid);
              ref = { id: started.meta.id, pid: event.pid };
              if (spec.stdin) started.input = stdinWriter(runner, () => requestId);
              sink.started(undefined, ref);
              // A run not ended within the runner's piece that said it started (the front holds
              // `started` for a short run's end: ADR 50) is answered in parts: its log's file is
              // made once this piece is handled (its microtasks), before the loop's check phase in
              // which gRPC sends the first part: a caller that saw output finds the run after an
              // agent's crash.
              queueMicrotask(() => {
                if (!ended) started.flush();
              });
              return;
            }
            if (event.ev === 'result') {
              ended = true;
              resolve(event);
              return;
            }
            if (event.ev !== 'stdout' && event.ev !== 'stderr') return;
            const data = Buffer.from(event.data, 'base64');
            const at = log.current?.append(event.ev, data);
            if (ended) return; // late output: the log's only
            const mark = ref === undefined || at === undefined ? undefined : { process: ref, at };
            if (sink.write(event.ev, data, mark)) return;
            sink.onDrain(resume);
            return false;
          },
        },
      )
      .then(
        () => log.current?.closeOutput(),
        (err: unknown) => {
          reject(err instanceof Error ? err : new Error(String(err)));
          log.current?.closeOutput();
        },
      );
  });
}

/** Writes to the stdin of the run that request `id()` started; the bytes it took. */
function stdinWriter(runner: RunnerClient, id: () => number): NonNullable<ProcessLog['input']> {
  return async (data, close, signal) => {
    const answer = await runner.request(
      { op: 'input', target: id(), data: data.toString('base64'), ...(close ? { end: true } : {}) },
      'taken',
      { signal },
    );
    return answer.bytes;
  };
}
