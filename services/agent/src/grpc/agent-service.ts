import * as grpc from '@grpc/grpc-js';
import { runDeadlines, WORKSPACE } from '@sandbox/contract';
import { AppError, toAppError, toGrpcStatus } from '@sandbox/errors';
import type { Logger } from '@sandbox/logger';
import type {
  AgentHandlers,
  CreateSandboxRequest__Output,
  ExecEvent,
  ExecRequest__Output,
  Sandbox,
} from '@sandbox/proto';
import type {
  ByteSink,
  ExecSpec,
  SandboxInfo,
  SandboxRuntime,
  SandboxSpec,
} from '../runtime/sandbox-runtime';
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

/** A run that prints this soon after it started needs no separate "started" message. */
const START_UNLESS_OUTPUT_MS = 100;

function execSpec(request: ExecRequest__Output): ExecSpec {
  const base = {
    sessionId: request.sessionId,
    env: request.env,
    workingDir: request.workingDir || WORKSPACE,
    timeoutMs: runDeadlines(request.timeoutMs).runnerMs,
    files: request.files.map((f) => ({ path: f.path, content: f.content })),
  };
  if (request.program === 'command' && request.command !== undefined) {
    return { ...base, command: request.command };
  }
  if (request.program === 'code' && request.code !== undefined)
    return { ...base, code: request.code };
  throw new AppError('invalid_request', 'Either code or command is required', {
    details: { field: 'command' },
  });
}

function sandboxSpec(request: CreateSandboxRequest__Output): SandboxSpec {
  const limits = request.limits;
  if (limits === null || !request.sessionId) {
    throw new AppError('invalid_request', 'sessionId and limits are required');
  }
  return {
    sessionId: request.sessionId,
    accountId: request.accountId,
    limits: {
      memoryMb: limits.memoryMb,
      cpu: limits.cpu,
      diskMb: limits.diskMb,
      pids: limits.pids,
    },
  };
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
        )
        .catch((err: unknown) => {
          // Sending the answer itself failed: never let that end the agent.
          logger.error({ err, method }, 'could not answer a call');
          callback({ code: grpc.status.INTERNAL, details: 'Internal error' });
        });
    };
  }

  /**
   * A server-streaming call: `work` writes messages through a byte sink that honours the
   * client's flow control, and may return one last message. A cancelled call aborts `signal`.
   * `started.message` tells the client the work began; with `started.unlessOutputWithinMs`,
   * only when no output (which tells it as well) follows that soon. grpc-js leaves Nagle's
   * algorithm on for server connections, so two small messages in a row would make the second
   * wait for the client's delayed ACK (~40 ms): a run that prints at once sends one.
   */
  function streaming<Req, Res>(
    method: string,
    toMessage: (stream: 'stdout' | 'stderr', chunk: Buffer) => Res,
    work: (request: Req, sink: ByteSink, signal: AbortSignal) => Promise<Res | undefined>,
    started?: { message: (size?: number) => Res; unlessOutputWithinMs?: number },
  ): grpc.handleServerStreamingCall<Req, Res> {
    return (call) => {
      const abort = new AbortController();
      call.on('cancelled', () => abort.abort());
      // One 'drain' listener however many writes met a full buffer before it drained.
      const drainWaiters: (() => void)[] = [];
      let announcedStart = false;
      let startTimer: NodeJS.Timeout | undefined;
      const announceStart = (size?: number): void => {
        clearTimeout(startTimer);
        if (started === undefined || announcedStart || call.cancelled) return;
        announcedStart = true;
        call.write(started.message(size));
      };
      const sink: ByteSink = {
        write: (stream, chunk) => {
          clearTimeout(startTimer);
          announcedStart = true; // output says it
          return call.cancelled ? true : call.write(toMessage(stream, chunk));
        },
        onDrain: (resume) => {
          drainWaiters.push(resume);
          if (drainWaiters.length === 1) {
            call.once('drain', () => drainWaiters.splice(0).forEach((waiter) => waiter()));
          }
        },
        started: (size) => {
          if (started?.unlessOutputWithinMs === undefined) announceStart(size);
          else if (startTimer === undefined) {
            startTimer = setTimeout(() => announceStart(size), started.unlessOutputWithinMs);
          }
        },
      };
      Promise.resolve()
        .then(async () => {
          checkInternalToken(call.metadata, deps.internalToken);
          const last = await work(call.request, sink, abort.signal).finally(() =>
            clearTimeout(startTimer),
          );
          if (call.cancelled) return;
          if (last !== undefined) call.write(last);
          call.end();
        })
        .catch((err: unknown) => {
          if (!call.cancelled) call.emit('error', fail(method, err));
        })
        .catch((err: unknown) => {
          logger.error({ err, method }, 'could not answer a call');
          call.destroy();
        });
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
      const info = await runtime.create(sandboxSpec(request));
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

    Exec: streaming<ExecRequest__Output, ExecEvent>(
      'Exec',
      (stream, data) => (stream === 'stdout' ? { stdout: { data } } : { stderr: { data } }),
      async (request: ExecRequest__Output, sink, signal) => ({
        result: await runtime.exec(execSpec(request), sink, signal),
      }),
      { message: () => ({ started: {} }), unlessOutputWithinMs: START_UNLESS_OUTPUT_MS },
    ),

    KillProcesses: unary('KillProcesses', async (request) => ({
      pids: await runtime.kill(request.sessionId, request.pid === 0 ? undefined : request.pid),
    })),

    WriteFile: unary('WriteFile', async (request) =>
      runtime.writeFile(request.sessionId, { path: request.path, content: request.content }),
    ),

    ReadFile: streaming(
      'ReadFile',
      (_stream, data) => ({ data }),
      async (request: { sessionId: string; path: string }, sink, signal) => {
        await runtime.readFile(request.sessionId, request.path, sink, signal);
        return undefined;
      },
      { message: (size) => ({ data: Buffer.alloc(0), size: size ?? 0 }) },
    ),

    PauseSandbox: unary('PauseSandbox', async (request) =>
      toSandbox(await runtime.pause(request.sessionId)),
    ),

    ResumeSandbox: unary('ResumeSandbox', async (request) =>
      toSandbox(await runtime.resume(request.sessionId)),
    ),

    HibernateSandbox: unary('HibernateSandbox', async (request) =>
      runtime.hibernate(request.sessionId),
    ),

    RestoreSandbox: unary('RestoreSandbox', async (request) =>
      toSandbox(await runtime.restore(sandboxSpec(request))),
    ),

    ListFiles: unary('ListFiles', async (request) =>
      runtime.listFiles(request.sessionId, request.path, {
        offset: request.offset,
        limit: request.limit || 10_000,
      }),
    ),
  };
}
