import type * as grpc from '@grpc/grpc-js';
import { AppError, toAppError, toGrpcStatus } from '@sandbox/errors';
import type { Logger } from '@sandbox/logger';
import type { AgentHandlers, ExecEvent, ExecRequest__Output, Sandbox } from '@sandbox/proto';
import type { SandboxInfo, SandboxRuntime } from '../runtime/sandbox-runtime';
import { checkInternalToken } from './auth';

export interface AgentServiceDeps {
  runtime: SandboxRuntime;
  logger: Logger;
  nodeId: string;
  version: string;
  previewAddress: string;
  internalToken: string | undefined;
}

const toSandbox = (info: SandboxInfo): Sandbox => ({
  sessionId: info.sessionId,
  containerId: info.containerId,
  status: info.status,
  filesCount: info.filesCount,
  activeProcesses: info.activeProcesses,
});

const MAX_TIMEOUT_MS = 300_000;

function execCommand(request: ExecRequest__Output): string {
  if (request.program === 'command' && request.command !== undefined) return request.command;
  if (request.program === 'code') {
    throw new AppError('invalid_request', 'Running `code` is not supported by this agent yet', {
      details: { field: 'code' },
    });
  }
  throw new AppError('invalid_request', 'Either code or command is required', {
    details: { field: 'command' },
  });
}

/** The agent's gRPC handlers over a sandbox runtime; errors leave as gRPC statuses. */
export function createAgentHandlers(deps: AgentServiceDeps): AgentHandlers {
  const { runtime, logger } = deps;

  function fail(method: string, err: unknown): Partial<grpc.StatusObject> {
    const appError = toAppError(err);
    if (appError.code === 'internal_error') logger.error({ err, method }, 'agent call failed');
    return toGrpcStatus(appError);
  }

  function unary<Req, Res>(
    method: string,
    handle: (request: Req, call: grpc.ServerUnaryCall<Req, Res>) => Promise<Res>,
  ): grpc.handleUnaryCall<Req, Res> {
    return (call, callback) => {
      Promise.resolve()
        .then(() => checkInternalToken(call.metadata, deps.internalToken))
        .then(() => handle(call.request, call))
        .then(
          (response) => callback(null, response),
          (err: unknown) => callback(fail(method, err)),
        );
    };
  }

  return {
    GetNodeInfo: unary('GetNodeInfo', async () => ({
      nodeId: deps.nodeId,
      version: deps.version,
      previewAddress: deps.previewAddress,
      sandboxes: await runtime.count(),
    })),

    CreateSandbox: unary('CreateSandbox', async (request, call) => {
      const limits = request.limits;
      if (limits === null || !request.sessionId) {
        throw new AppError('invalid_request', 'sessionId and limits are required');
      }
      const info = await runtime.create({
        sessionId: request.sessionId,
        accountId: request.accountId,
        limits: {
          memoryMb: limits.memoryMb,
          cpu: limits.cpu,
          diskMb: limits.diskMb,
          pids: limits.pids,
        },
      });
      if (call.cancelled) {
        // The caller gave up (deadline passed) and has ended the session: leave nothing behind.
        logger.warn({ sessionId: request.sessionId }, 'create cancelled by caller; removing');
        await runtime.destroy(request.sessionId);
        throw new AppError('request_timeout', 'The caller cancelled the creation');
      }
      return toSandbox(info);
    }),

    GetSandbox: unary('GetSandbox', async (request) =>
      toSandbox(await runtime.inspect(request.sessionId)),
    ),

    DestroySandbox: unary('DestroySandbox', async (request) => ({
      existed: await runtime.destroy(request.sessionId),
    })),

    Exec: (call) => {
      const abort = new AbortController();
      call.on('cancelled', () => abort.abort());
      const send = (event: ExecEvent): void => {
        if (!call.cancelled) call.write(event);
      };
      Promise.resolve()
        .then(async () => {
          checkInternalToken(call.metadata, deps.internalToken);
          const request = call.request;
          const outcome = await runtime.exec(
            {
              sessionId: request.sessionId,
              command: execCommand(request),
              env: request.env,
              workingDir: request.workingDir || '/workspace',
              timeoutMs: Math.min(Math.max(request.timeoutMs, 1), MAX_TIMEOUT_MS),
            },
            {
              stdout: (data) => send({ stdout: { data } }),
              stderr: (data) => send({ stderr: { data } }),
            },
            abort.signal,
          );
          send({ result: outcome });
          call.end();
        })
        .catch((err: unknown) => {
          if (!call.cancelled) call.emit('error', fail('Exec', err));
        });
    },
  };
}
