import type {
  FileListing,
  FileOperation,
  FileOperationResult,
  WatchEndReason,
} from '@sandbox/contract';
import { AppError } from '@sandbox/errors';
import { FILE_OPERATION_EVENTS } from '@sandbox/runner';
import type { RunnerClient } from './runner-client';
import type {
  ByteSink,
  CodeContextInfo,
  ContextAction,
  FileContent,
  ListPage,
  TerminalHandle,
  TerminalSpec,
  WatchEvent,
  WatchSpec,
} from '../sandbox-runtime';

/* The requests of a session other than its runs (runner-operations.ts): one to its runner each. */

/** Kills one process of the sandbox and its descendants. */
export async function kill(runner: RunnerClient, pid: number): Promise<number[]> {
  const result = await runner.request({ op: 'kill', pid }, 'killed');
  return result.pids;
}

export async function writeFile(
  runner: RunnerClient,
  file: FileContent,
): Promise<{ path: string; size: number }> {
  const result = await runner.request(
    { op: 'writeFiles', files: [{ path: file.path, content: file.content.toString('base64') }] },
    'written',
  );
  return { path: file.path, size: result.files[0]?.size ?? 0 };
}

/** A file's size, then its bytes, at the pace of `sink`; an aborted `signal` stops the read. */
export async function readFile(
  runner: RunnerClient,
  path: string,
  sink: ByteSink,
  signal: AbortSignal,
): Promise<number> {
  const result = await runner.request({ op: 'readFile', path }, 'read', {
    signal,
    onEvent: (event, resume) => {
      if (event.ev === 'opened') {
        sink.started(event.size);
        return;
      }
      if (event.ev !== 'chunk') return;
      if (sink.write('stdout', Buffer.from(event.data, 'base64'))) return;
      sink.onDrain(resume);
      return false;
    },
  });
  return result.size;
}

export async function listFiles(
  runner: RunnerClient,
  path: string,
  page: ListPage,
): Promise<FileListing> {
  const result = await runner.request({ op: 'listFiles', path, ...page }, 'listed');
  return {
    files: result.files,
    total: result.total,
    truncated: result.truncated,
  };
}

/**
 * A watch of a directory, served by the runner's front (ADR 60): its events to `onEvent`
 * until `signal` aborts it or it ends. A runner that stops under a started watch (the sandbox
 * removed, the runner restarted) ends it as `stopped`.
 */
export async function watchFiles(
  runner: RunnerClient,
  spec: WatchSpec,
  onEvent: (event: WatchEvent) => void,
  signal: AbortSignal,
): Promise<WatchEndReason> {
  let watching = false;
  try {
    const end = await runner.request({ op: 'watch', ...spec }, 'unwatched', {
      signal,
      onEvent: (event) => {
        if (event.ev === 'watching') {
          watching = true;
          onEvent({ kind: 'watching', directories: event.directories });
        } else if (event.ev === 'changes') onEvent({ kind: 'changes', changes: event.changes });
        else if (event.ev === 'overflow') onEvent({ kind: 'overflow' });
      },
    });
    return end.reason;
  } catch (err) {
    if (watching && err instanceof AppError && err.code === 'service_unavailable') return 'stopped';
    throw err;
  }
}

/** A stat, remove, rename or mkdir in the sandbox: its answer, without the protocol's fields. */
export async function manageFile<O extends FileOperation>(
  runner: RunnerClient,
  operation: O,
): Promise<FileOperationResult<O>> {
  const answer = await runner.request(operation, FILE_OPERATION_EVENTS[operation.op]);
  const { id: _id, ev: _ev, ...result } = answer;
  // The event FILE_OPERATION_EVENTS names for an op carries that op's result (protocol.ts).
  return result as unknown as FileOperationResult<O>;
}

/**
 * Starts `spec.argv` on a pseudo-terminal in the sandbox; its screen's bytes go to `sink` at
 * its pace ('stdout'). Resolves once the program runs. An aborted `signal` hangs it up.
 */
export async function openTerminal(
  runner: RunnerClient,
  spec: TerminalSpec,
  sink: ByteSink,
  signal: AbortSignal,
): Promise<TerminalHandle> {
  let id = 0;
  let started: (pid: number) => void = () => undefined;
  const pid = new Promise<number>((resolve) => (started = resolve));
  const exited = runner
    .request(
      {
        op: 'terminal',
        argv: spec.argv,
        env: spec.env,
        cwd: spec.workingDir,
        cols: spec.cols,
        rows: spec.rows,
      },
      'exited',
      {
        signal,
        onSent: (sent) => (id = sent),
        onEvent: (event, resume) => {
          if (event.ev === 'started') started(event.pid ?? 0);
          if (event.ev !== 'stdout') return;
          if (sink.write('stdout', Buffer.from(event.data, 'base64'))) return;
          sink.onDrain(resume);
          return false;
        },
      },
    )
    .then((event) => event.exitCode);
  // A refusal (a bad working directory) rejects before the program runs.
  const running = await Promise.race([pid, exited.then(() => 0)]);
  return {
    pid: running,
    write: async (data) => {
      await runner.request({ op: 'input', target: id, data: data.toString('base64') }, 'taken');
    },
    resize: async (cols, rows) => {
      await runner.request({ op: 'resize', target: id, cols, rows }, 'flow');
    },
    exited,
  };
}

/** The session's code contexts (ADR 42): the one acted on, or all (none for delete). */
export async function manageContexts(
  runner: RunnerClient,
  action: ContextAction,
): Promise<CodeContextInfo[]> {
  const { contexts } = await runner.request({ op: 'context', ...action }, 'contexts');
  return contexts;
}
