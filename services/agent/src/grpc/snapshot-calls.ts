import { isSessionId, isSnapshotId } from '@sandbox/contract';
import { AppError } from '@sandbox/errors';
import type { AgentHandlers } from '@sandbox/proto';
import type { SandboxRuntime } from '../runtime/sandbox-runtime';
import { unary, type CallContext } from './call-handlers';

function checkedSnapshotId(snapshotId: string): string {
  if (!isSnapshotId(snapshotId)) {
    throw new AppError('invalid_request', 'snapshotId is not a snapshot id');
  }
  return snapshotId;
}

/** SnapshotSandbox and DeleteSnapshot (ADR 44): workspaces kept in the blob store by id. */
export function snapshotHandlers(
  context: CallContext & { blobStore: string },
  runtime: SandboxRuntime,
): Pick<AgentHandlers, 'SnapshotSandbox' | 'DeleteSnapshot'> {
  return {
    SnapshotSandbox: unary(context, 'SnapshotSandbox', async (request) => {
      if (!isSessionId(request.sessionId)) {
        throw new AppError('invalid_request', 'sessionId is not a session id');
      }
      const taken = await runtime.snapshot(
        request.sessionId,
        checkedSnapshotId(request.snapshotId),
      );
      return { ...taken, storedIn: context.blobStore };
    }),

    DeleteSnapshot: unary(context, 'DeleteSnapshot', async (request) => {
      await runtime.deleteSnapshot(checkedSnapshotId(request.snapshotId));
      return {};
    }),
  };
}
