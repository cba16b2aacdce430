import type { AgentHandlers } from '@sandbox/proto';
import type { SandboxRuntime } from '../runtime/sandbox-runtime';
import { streaming, unary, type CallContext } from './call-handlers';
import { watchFiles } from './watch-call';

type FileMethods =
  | 'WriteFile'
  | 'ReadFile'
  | 'ListFiles'
  | 'StatFile'
  | 'RemoveFile'
  | 'RenameFile'
  | 'MakeDirectory'
  | 'WatchFiles';

/** The calls on a session's /workspace files; the runner checks every path. */
export function fileHandlers(
  context: CallContext,
  runtime: SandboxRuntime,
): Pick<AgentHandlers, FileMethods> {
  return {
    WriteFile: unary(context, 'WriteFile', async (request) =>
      runtime.writeFile(request.sessionId, { path: request.path, content: request.content }),
    ),

    ReadFile: streaming(
      context,
      'ReadFile',
      (_stream, data) => ({ data }),
      async (request: { sessionId: string; path: string }, sink, signal) => {
        await runtime.readFile(request.sessionId, request.path, sink, signal);
        return undefined;
      },
      { message: (size) => ({ data: Buffer.alloc(0), size: size ?? 0 }) },
    ),

    ListFiles: unary(context, 'ListFiles', async (request) =>
      runtime.listFiles(request.sessionId, request.path, {
        offset: request.offset,
        limit: request.limit || 10_000,
      }),
    ),

    StatFile: unary(context, 'StatFile', async ({ sessionId, path }) =>
      runtime.manageFile(sessionId, { op: 'statFile', path }),
    ),

    RemoveFile: unary(context, 'RemoveFile', async ({ sessionId, path, recursive }) =>
      runtime.manageFile(sessionId, { op: 'removeFile', path, recursive }),
    ),

    RenameFile: unary(context, 'RenameFile', async ({ sessionId, from, to, overwrite }) =>
      runtime.manageFile(sessionId, { op: 'renameFile', from, to, overwrite }),
    ),

    MakeDirectory: unary(context, 'MakeDirectory', async ({ sessionId, path }) =>
      runtime.manageFile(sessionId, { op: 'makeDirectory', path }),
    ),

    WatchFiles: watchFiles(context, runtime),
  };
}
