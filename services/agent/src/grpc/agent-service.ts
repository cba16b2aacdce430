import type * as grpc from '@grpc/grpc-js';
import {
  isSnapshotId,
  REQUEST_ID,
  REQUEST_ID_METADATA_KEY,
  runDeadlines,
  WORKSPACE,
} from '@sandbox/contract';
import { AppError } from '@sandbox/errors';
import { withRequestId, type Logger } from '@sandbox/logger';
import { loadAgentProto } from '@sandbox/proto';
import type { AgentHandlers, ExecEvent, RunSpec__Output } from '@sandbox/proto';
import type { ByteSink, RunSpec, ProcessRef, SandboxRuntime } from '../runtime/sandbox-runtime';
import type { AgentMetrics } from '../node/agent-metrics';
import { LastKnown } from '../node/last-known';
import { readNodeLoad } from '../node/node-load';
import { streaming, unary } from './call-handlers';
import { fileHandlers } from './file-calls';
import { contextHandlers } from './context-calls';
import { processHandlers } from './process-calls';
import { snapshotHandlers } from './snapshot-calls';
import { forkHandlers } from './fork-calls';
import { egressPolicy, sandboxSpec, toSandbox } from './sandbox-messages';
import { openTerminal } from './terminal-call';

export interface AgentServiceDeps {
  runtime: SandboxRuntime;
  logger: Logger;
  nodeId: string;
  version: string;
  previewAddress: string;
  internalToken: string | undefined;
  /** Sandboxes the node takes at most, and the memory it keeps free. */
  capacity: { maxSandboxes: number; memoryReserveBytes: number };
  /** The blob store's id (`blobStoreId`): where an archived workspace is kept. */
  blobStore: string;
}

/** A run that prints this soon after it started needs no separate "started" message. */
const START_UNLESS_OUTPUT_MS = 100;

/** A run's kept output when the caller names no size. */
const DEFAULT_LOG_BYTES = 1024 * 1024;

function runSpecOf(request: RunSpec__Output): RunSpec {
  const base = {
    sessionId: request.sessionId,
    env: request.env,
    workingDir: request.workingDir || WORKSPACE,
    timeoutMs: runDeadlines(request.timeoutMs).runnerMs,
    files: request.files.map((f) => ({ path: f.path, content: f.content })),
    stdin: request.stdin,
    logBytes: request.logBytes || DEFAULT_LOG_BYTES,
    ...(request.contextId === '' ? {} : { contextId: request.contextId }),
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

type LifecycleMethods =
  | 'GetNodeInfo'
  | 'CreateSandbox'
  | 'GetSandbox'
  | 'DestroySandbox'
  | 'PauseSandbox'
  | 'ResumeSandbox'
  | 'HibernateSandbox'
  | 'RestoreSandbox'
  | 'SetEgress';

type DataMethods =
  | 'Exec'
  | 'OpenTerminal'
  | 'KillProcesses'
  | 'ManageContexts'
  | 'ListProcesses'
  | 'ReadOutput'
  | 'WriteStdin';

/** The caller's deadline of a call, in epoch ms (undefined: none). */
function deadlineOf(call: grpc.ServerUnaryCall<unknown, unknown>): number | undefined {
  const deadline = call.getDeadline();
  const at = deadline instanceof Date ? deadline.getTime() : deadline;
  return Number.isFinite(at) && at > 0 ? at : undefined;
}

/**
 * How old the sandbox count a heartbeat answers with may be. It is Docker's container list:
 * the heartbeat answers from the last one and never waits for dockerd (a busy node is not a
 * dead one, issue 39).
 */
const COUNT_FRESH_MS = 2000;

/** The calls that make, inspect, idle, put to sleep and remove sandboxes. */
function lifecycleHandlers(deps: AgentServiceDeps): Pick<AgentHandlers, LifecycleMethods> {
  const { runtime, logger } = deps;
  const sandboxCount = new LastKnown(() => runtime.count(), COUNT_FRESH_MS);
  return {
    GetNodeInfo: unary(deps, 'GetNodeInfo', async () => {
      const [counted, load] = await Promise.all([sandboxCount.getAged(), readNodeLoad()]);
      return {
        nodeId: deps.nodeId,
        version: deps.version,
        previewAddress: deps.previewAddress,
        sandboxes: counted.value,
        sandboxesAgeMs: Math.round(counted.ageMs),
        pool: runtime.poolStatus?.() ?? [],
        maxSandboxes: deps.capacity.maxSandboxes,
        memoryReserveBytes: deps.capacity.memoryReserveBytes,
        ...load,
        blobStore: deps.blobStore,
      };
    }),

    CreateSandbox: unary(deps, 'CreateSandbox', async (request, call) => {
      if (request.snapshotId !== '' && !isSnapshotId(request.snapshotId)) {
        throw new AppError('invalid_request', 'snapshotId is not a snapshot id');
      }
      const info = await runtime.create(sandboxSpec(request), {
        deadlineAt: deadlineOf(call),
        ...(request.snapshotId === '' ? {} : { snapshotId: request.snapshotId }),
      });
      if (call.cancelled) {
        // The caller gave up (deadline passed) and has ended the session: leave nothing behind.
        logger.warn({ sessionId: request.sessionId }, 'create cancelled by caller; removing');
        await runtime.destroy(request.sessionId);
        throw new AppError('request_timeout', 'The caller cancelled the creation');
      }
      return toSandbox(info);
    }),

    GetSandbox: unary(deps, 'GetSandbox', async (request) =>
      toSandbox(await runtime.inspect(request.sessionId)),
    ),

    DestroySandbox: unary(deps, 'DestroySandbox', async (request) => ({
      existed: await runtime.destroy(request.sessionId),
    })),

    PauseSandbox: unary(deps, 'PauseSandbox', async (request) =>
      toSandbox(await runtime.pause(request.sessionId, request.unusedForMs)),
    ),

    ResumeSandbox: unary(deps, 'ResumeSandbox', async (request) =>
      toSandbox(await runtime.resume(request.sessionId)),
    ),

    HibernateSandbox: unary(deps, 'HibernateSandbox', async (request) => {
      const { keptDisk, ...saved } = await runtime.hibernate(request.sessionId, {
        unusedForMs: Number(request.unusedForMs),
        evacuate: request.evacuate,
      });
      return { ...saved, savedIn: keptDisk ? `node:${deps.nodeId}` : deps.blobStore };
    }),

    RestoreSandbox: unary(deps, 'RestoreSandbox', async (request) =>
      toSandbox(await runtime.restore(sandboxSpec(request))),
    ),

    SetEgress: unary(deps, 'SetEgress', async (request) => {
      if (!request.sessionId) throw new AppError('invalid_request', 'sessionId is required');
      return toSandbox(await runtime.setEgress(request.sessionId, egressPolicy(request.egress)));
    }),
  };
}

/** The calls that run code in a sandbox and see to its processes. */
function dataHandlers({ runtime, ...context }: AgentServiceDeps): Pick<AgentHandlers, DataMethods> {
  return {
    Exec: streaming<RunSpec__Output, ExecEvent>(
      context,
      'Exec',
      (stream, data, mark) => ({ [stream]: { data, ...mark } }),
      async (request: RunSpec__Output, sink, signal) => {
        // The run's process, said again with its result: a run that prints nothing and ends
        // within START_UNLESS_OUTPUT_MS was never announced with it.
        let process: ProcessRef | undefined;
        const remembering: ByteSink = {
          write: (stream, chunk, mark) => sink.write(stream, chunk, mark),
          onDrain: (resume) => sink.onDrain(resume),
          started: (size, ref) => {
            process = ref ?? process;
            sink.started(size, ref);
          },
        };
        const result = await runtime.exec(runSpecOf(request), remembering, signal);
        // Debug, not info: the gateway logs every request with its id, status and time; a
        // line per run here too cost the agent's loop a third of a millisecond a run.
        context.logger.debug(
          {
            sessionId: request.sessionId,
            exitCode: result.exitCode,
            ms: result.executionTimeMs,
            timedOut: result.timedOut,
          },
          'run ended',
        );
        return { result: process === undefined ? result : { ...result, process } };
      },
      {
        message: (_size, process) => ({ started: process === undefined ? {} : { process } }),
        // A run with stdin is said to have started at once: its caller waits to write to it.
        unlessOutputWithinMs: (request) => (request.stdin ? undefined : START_UNLESS_OUTPUT_MS),
      },
    ),

    ...processHandlers(context, runtime),
    ...contextHandlers(context, runtime),

    OpenTerminal: openTerminal(context, runtime),

    KillProcesses: unary(context, 'KillProcesses', async (request) => ({
      pids: await runtime.kill(request.sessionId, request.pid === 0 ? undefined : request.pid),
    })),
  };
}

/** The agent's gRPC handlers over a sandbox runtime; errors leave as gRPC statuses. */
export function createAgentHandlers(deps: AgentServiceDeps): AgentHandlers {
  return {
    ...lifecycleHandlers(deps),
    ...dataHandlers(deps),
    ...fileHandlers(deps, deps.runtime),
    ...snapshotHandlers(deps, deps.runtime),
    ...forkHandlers(deps, deps.runtime),
  };
}

type CallLike = {
  metadata: grpc.Metadata;
  once?: (event: string, listener: (arg?: { code?: number }) => void) => unknown;
};

/**
 * Serves each call within the scope of the gateway request it serves (its `x-request-id`
 * metadata): every line the agent logs for it carries that id. With `metrics`, times each
 * call and counts it by status.
 */
function instrumented(handlers: AgentHandlers, metrics?: AgentMetrics): AgentHandlers {
  const scoped = Object.entries(handlers).map(([name, handler]) => [
    name,
    (call: CallLike, ...rest: unknown[]) => {
      const end = metrics?.start(name);
      const [callback] = rest;
      if (end !== undefined && typeof callback === 'function') {
        // Unary: the answer's status.
        rest[0] = (err: { code?: number } | null, ...answer: unknown[]) => {
          end(err === null ? 0 : (err.code ?? 2));
          return (callback as (...args: unknown[]) => unknown)(err, ...answer);
        };
      } else if (end !== undefined) {
        // A stream: its end, its error, or its caller leaving.
        call.once?.('finish', () => end(0));
        call.once?.('error', (status) => end(status?.code ?? 2));
        call.once?.('cancelled', () => end(1));
      }
      const [sent] = call.metadata.get(REQUEST_ID_METADATA_KEY);
      const serve = () => (handler as (...args: unknown[]) => unknown)(call, ...rest);
      return typeof sent === 'string' && REQUEST_ID.test(sent)
        ? withRequestId(sent, serve)
        : serve();
    },
  ]);
  return Object.fromEntries(scoped) as AgentHandlers;
}

/** Serves the Agent service of `agent.proto` on `server`. */
export function addAgentService(
  server: grpc.Server,
  deps: AgentServiceDeps,
  metrics?: AgentMetrics,
): void {
  server.addService(
    loadAgentProto().agent.v1.Agent.service,
    instrumented(createAgentHandlers(deps), metrics),
  );
}
