import type * as grpc from '@grpc/grpc-js';
import type { FileWatchEvent, WatchFilesRequest__Output } from '@sandbox/proto';
import type { SandboxRuntime, WatchEvent } from '../runtime/sandbox-runtime';
import { checkInternalToken } from './auth';
import { fail, type CallContext } from './call-handlers';

function toMessage(event: WatchEvent): FileWatchEvent {
  switch (event.kind) {
    case 'watching':
      return { kind: 'watching', directories: event.directories };
    case 'changes':
      return {
        kind: 'changes',
        changes: event.changes.map((change) => ({
          type: change.type,
          path: change.path,
          oldPath: change.oldPath ?? '',
          isDirectory: change.isDirectory,
        })),
      };
    case 'overflow':
      return { kind: 'overflow' };
  }
}

/**
 * WatchFiles (ADR 60): a watch's events as they come, then `ended` with its reason. A client
 * that does not keep up loses changes rather than the agent's memory: while the call's
 * buffer is full, events are dropped, and `overflow` says so once it drained.
 */
export function watchFiles(
  context: CallContext,
  runtime: SandboxRuntime,
): grpc.handleServerStreamingCall<WatchFilesRequest__Output, FileWatchEvent> {
  return (call) => {
    const abort = new AbortController();
    call.on('cancelled', () => abort.abort());
    // A client that left at once may be gone before this handler runs: no event comes then.
    if (call.cancelled) abort.abort();
    let congested = false;
    let dropped = false;
    const onEvent = (event: WatchEvent): void => {
      if (call.cancelled) return;
      if (congested) {
        dropped = true;
        return;
      }
      if (call.write(toMessage(event))) return;
      // Taken, but the call's buffer is full: what comes next waits for its drain.
      congested = true;
      call.once('drain', () => {
        congested = false;
        if (dropped && !call.cancelled) call.write({ kind: 'overflow' });
        dropped = false;
      });
    };
    Promise.resolve()
      .then(async () => {
        checkInternalToken(call.metadata, context.internalToken);
        const { sessionId, path, recursive } = call.request;
        const reason = await runtime.watchFiles(
          sessionId,
          { path, recursive },
          onEvent,
          abort.signal,
        );
        if (call.cancelled) return;
        call.write({ kind: 'ended', reason });
        call.end();
      })
      .catch((err: unknown) => {
        if (!call.cancelled) call.emit('error', fail(context, 'WatchFiles', err));
      })
      .catch((err: unknown) => {
        context.logger.error({ err }, 'could not answer a call');
        call.destroy();
      });
  };
}
