import type { Logger } from '@sandbox/logger';
import type { RunnerClient } from './runner-client';
import type { ByteSink, ExecOutcome, ExecSpec, FileContent, FileEntry } from './sandbox-runtime';

/** How long past its own timeout a run may take before the agent gives up on the runner. */
const RUN_GUARD_MS = 15_000;

/** Runs a command or code through the sandbox's runner, streaming output to `sink`. */
export async function exec(
  runner: RunnerClient,
  spec: ExecSpec,
  sink: ByteSink,
  signal: AbortSignal,
  logger: Logger,
): Promise<ExecOutcome> {
  let runId: number | undefined;
  let resume = (): void => undefined;
  const cancel = (): void => {
    if (runId === undefined) return;
    runner.request({ op: 'cancel', target: runId }, 'killed').catch((err: unknown) => {
      logger.warn({ err }, 'cancelling a run failed');
    });
  };
  signal.addEventListener('abort', cancel, { once: true });
  const guard = setTimeout(() => {
    logger.error('the runner missed a run timeout; restarting it');
    runner.close();
  }, spec.timeoutMs + RUN_GUARD_MS);
  try {
    const result = await runner.request(
      {
        op: 'exec',
        ...(spec.code === undefined ? { command: spec.command ?? '' } : { code: spec.code }),
        env: spec.env,
        cwd: spec.workingDir,
        timeoutMs: spec.timeoutMs,
        files: spec.files.map((f) => ({ path: f.path, content: f.content.toString('base64') })),
      },
      'exec',
      (event) => {
        if (event.ev === 'chunk') return;
        if (sink.write(event.ev, Buffer.from(event.data, 'base64'))) return;
        sink.onDrain(resume);
        return false;
      },
      (id, resumeRunner) => {
        runId = id;
        resume = resumeRunner;
        if (signal.aborted) cancel();
      },
    );
    return {
      exitCode: result.exitCode,
      executionTimeMs: result.executionTimeMs,
      memoryUsedBytes: result.memoryUsedBytes,
      cpuTimeMs: result.cpuTimeMs,
      timedOut: result.timedOut,
      filesWritten: result.filesWritten,
    };
  } finally {
    clearTimeout(guard);
    signal.removeEventListener('abort', cancel);
  }
}

export async function kill(runner: RunnerClient, pid: number | undefined): Promise<number[]> {
  const result = await runner.request(
    pid === undefined ? { op: 'kill' } : { op: 'kill', pid },
    'killed',
  );
  return result.pids;
}

export async function writeFile(
  runner: RunnerClient,
  file: FileContent,
): Promise<{ path: string; size: number }> {
  const result = await runner.request(
    { op: 'writeFile', path: file.path, content: file.content.toString('base64') },
    'written',
  );
  return { path: result.path, size: result.size };
}

export async function readFile(
  runner: RunnerClient,
  path: string,
  sink: ByteSink,
): Promise<number> {
  let resume = (): void => undefined;
  const result = await runner.request(
    { op: 'readFile', path },
    'read',
    (event) => {
      if (sink.write('stdout', Buffer.from(event.data, 'base64'))) return;
      sink.onDrain(resume);
      return false;
    },
    (_id, resumeRunner) => {
      resume = resumeRunner;
    },
  );
  return result.size;
}

export async function listFiles(
  runner: RunnerClient,
  path: string,
  limit: number,
): Promise<{ files: FileEntry[]; truncated: boolean }> {
  const result = await runner.request({ op: 'listFiles', path, limit }, 'listed');
  return {
    files: result.files.map((f) => ({ path: f.path, size: f.size, modified: f.modified })),
    truncated: result.truncated,
  };
}
