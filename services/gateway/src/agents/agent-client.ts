import { Readable } from 'node:stream';
import * as grpc from '@grpc/grpc-js';
import { AppError, fromGrpcError, isConnectionFailure } from '@sandbox/errors';
import { bearer, INTERNAL_TOKEN_METADATA_KEY, REQUEST_ID_METADATA_KEY } from '@sandbox/contract';
import { currentRequestId } from '@sandbox/logger';
import {
  loadAgentProto,
  type AgentClient as GrpcAgentClient,
  type DestroySandboxResponse__Output,
  type ExecEvent__Output,
  type FileChunk__Output,
  type HibernateResponse__Output,
  type KillProcessesResponse__Output,
  type ListFilesResponse__Output,
  type ListProcessesResponse__Output,
  type OutputEvent__Output,
  type WriteFileResponse__Output,
  type WriteStdinResponse__Output,
  type ExecRequest,
  type TerminalOutput__Output,
  type NodeInfo__Output,
  type ResourceLimits,
  type Sandbox__Output,
} from '@sandbox/proto';
import type { EgressPolicy, FileListing } from '@sandbox/contract';
import {
  toExecEvent,
  toFileListing,
  toNodeStatus,
  toOutputEvent,
  toProcessRecord,
  toSandboxInfo,
  type ExecEvent,
  type NodeStatus,
  type OutputEvent,
  type OutputPosition,
  type ProcessRecord,
  type SandboxInfo,
  type TerminalSpec,
} from './agent-messages';

export interface AgentClientOptions {
  nodeId: string;
  address: string;
  token: string | undefined;
  /** Deadline of unary calls (spec 8.2: session operations 10 s). */
  callTimeoutMs: number;
  /** Deadline of file operations (spec 8.2: 30 s). */
  fileTimeoutMs: number;
}

/** How long a file's bytes may take to reach a slow reader, once the file is open. */
const READ_STREAM_DEADLINE_MS = 10 * 60 * 1000;
const HIBERNATE_TIMEOUT_MS = 10 * 60 * 1000;
/**
 * How long a wake cut short by the node's connection waits for the node to answer again (an
 * agent restarted by its supervisor is back within seconds) before it fails with 503.
 */
const RECONNECT_WAIT_MS = 15_000;

/** What a deep sleep did (`inUse`: nothing, the session was in use), and where it saved. */
export interface Hibernated {
  filesCount: number;
  inUse: boolean;
  /** The blob store's id, or `node:<id>` for a disk kept on the node. */
  savedIn: string;
}

/** What creating or restoring a sandbox needs. */
export interface SandboxRequest {
  sessionId: string;
  accountId: string;
  limits: ResourceLimits;
  /** Where the sandbox may connect; absent or null: allow-all. */
  egress?: EgressPolicy | null;
}

/** A request's egress policy as the wire has it (absent: allow-all). */
function wireEgress(egress: EgressPolicy | null | undefined): { egress?: EgressPolicy } {
  return egress === undefined || egress === null ? {} : { egress };
}

/** One unary call of the agent's client, given its metadata, options and callback. */
type UnaryCall<Res> = (
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: grpc.requestCallback<Res>,
) => grpc.ClientUnaryCall;

/** A terminal to start: what it runs, where, on a screen of what size, in which session. */
export type TerminalStartSpec = TerminalSpec & { sessionId: string };

/** Receives a terminal's events. */
export interface TerminalHandlers {
  started(pid: number): void;
  data(bytes: Buffer): void;
  exited(exitCode: number): void;
  /** The call failed (the node refused it or went away). */
  failed(err: AppError): void;
  /** The node ended the call (after `exited`). */
  ended(): void;
}

/** A terminal under way. */
export interface TerminalConnection {
  /** Typed bytes; false: wait for `onceDrained` before more. */
  write(data: Buffer): boolean;
  resize(cols: number, rows: number): void;
  onceDrained(resume: () => void): void;
  /** Holds the screen's bytes (back up to the program) / lets them flow. */
  pause(): void;
  resume(): void;
  /** Hangs the program up. */
  end(): void;
}

/** Pauses and resumes the flow of a run's events (backpressure up to the process). */
export interface FlowControl {
  pause(): void;
  resume(): void;
}

/** Receives a running execution's events. */
export interface ExecHandlers {
  onEvent(event: ExecEvent, flow: FlowControl): void;
}

/** The gateway's view of one agent; every failure comes back as an AppError. */
export class AgentClient {
  readonly nodeId: string;
  private readonly client: GrpcAgentClient;
  private readonly token: string | undefined;
  private readonly callTimeoutMs: number;
  private readonly fileTimeoutMs: number;
  private previewAddressCache: Promise<string> | undefined;

  constructor(options: AgentClientOptions) {
    this.nodeId = options.nodeId;
    this.token = options.token;
    this.callTimeoutMs = options.callTimeoutMs;
    this.fileTimeoutMs = options.fileTimeoutMs;
    const Agent = loadAgentProto().agent.v1.Agent;
    this.client = new Agent(options.address, grpc.credentials.createInsecure(), {
      'grpc.max_receive_message_length': 128 * 1024 * 1024,
      'grpc.keepalive_time_ms': 30_000,
      // A node back from an outage is reached within a second (grpc-js would otherwise back
      // off up to two minutes between attempts): its heartbeat and its requests resume.
      'grpc.initial_reconnect_backoff_ms': 250,
      'grpc.max_reconnect_backoff_ms': 1000,
    });
  }

  /** The token, and the id of the request this call serves (the agent logs under it). */
  private metadata(): grpc.Metadata {
    const metadata = new grpc.Metadata();
    if (this.token !== undefined) metadata.set(INTERNAL_TOKEN_METADATA_KEY, bearer(this.token));
    const requestId = currentRequestId();
    if (requestId !== undefined) metadata.set(REQUEST_ID_METADATA_KEY, requestId);
    return metadata;
  }

  private options(timeoutMs = this.callTimeoutMs): grpc.CallOptions {
    return { deadline: new Date(Date.now() + timeoutMs) };
  }

  private unary<Res>(call: UnaryCall<Res>, timeoutMs = this.callTimeoutMs): Promise<Res> {
    return new Promise((resolve, reject) => {
      call(this.metadata(), this.options(timeoutMs), (err, response) => {
        if (err !== null || response === undefined) reject(fromGrpcError(err));
        else resolve(response);
      });
    });
  }

  /**
   * An idempotent call that the node may lose (an agent restarted under it): when the
   * connection was up as the call began and failed under it, the call is made again once the
   * node answers, for up to RECONNECT_WAIT_MS after each loss. A node already unreachable at
   * the start fails at once, as any call does.
   */
  private async surviving<Res>(call: UnaryCall<Res>, timeoutMs: number): Promise<Res> {
    for (;;) {
      const wasConnected =
        this.client.getChannel().getConnectivityState(false) === grpc.connectivityState.READY;
      try {
        return await this.unary(call, timeoutMs);
      } catch (err) {
        if (!wasConnected || !isConnectionFailure(err) || !(await this.reconnected())) throw err;
      }
    }
  }

  /** Whether the node answers again within RECONNECT_WAIT_MS. */
  private reconnected(): Promise<boolean> {
    return new Promise((resolve) => {
      this.client.waitForReady(Date.now() + RECONNECT_WAIT_MS, (err) => resolve(!err));
    });
  }

  /** The node's preview proxy address; asked once, then remembered. */
  async previewAddress(): Promise<string> {
    this.previewAddressCache ??= this.unary<NodeInfo__Output>((md, options, cb) =>
      this.client.getNodeInfo({}, md, options, cb),
    ).then((info) => info.previewAddress);
    try {
      return await this.previewAddressCache;
    } catch (err) {
      this.previewAddressCache = undefined;
      throw err;
    }
  }

  /**
   * False while the connection to the node is down and between two attempts to reconnect: a
   * call now would fail at once (one with `waitForReady` waits for the next attempt).
   */
  connectionSettled(): boolean {
    const state = this.client.getChannel().getConnectivityState(false);
    return state === grpc.connectivityState.READY || state === grpc.connectivityState.IDLE;
  }

  /** Whether the connection to the node is open now (a call would be sent at once). */
  connectionReady(): boolean {
    return this.client.getChannel().getConnectivityState(false) === grpc.connectivityState.READY;
  }

  /** The node's heartbeat: who it is, its capacity and load (the `timeoutMs` deadline). */
  async nodeStatus(
    timeoutMs: number,
    { waitForReady = false } = {},
  ): Promise<{ nodeId: string; status: NodeStatus }> {
    // `waitForReady`: waits for a connection under way (a node coming back) up to the deadline,
    // instead of failing at once while the channel is between two attempts.
    const info = await this.unary<NodeInfo__Output>((md, options, cb) => {
      if (waitForReady) md.setOptions({ waitForReady: true });
      return this.client.getNodeInfo({}, md, options, cb);
    }, timeoutMs);
    return { nodeId: info.nodeId, status: toNodeStatus(info) };
  }

  async createSandbox({ egress, ...input }: SandboxRequest): Promise<void> {
    const request = { ...input, ...wireEgress(egress) };
    await this.unary<Sandbox__Output>((md, options, cb) =>
      this.client.createSandbox(request, md, options, cb),
    );
  }

  /** Replaces a session's egress policy on its node (applied to its sandbox at once). */
  async setEgress(sessionId: string, egress: EgressPolicy | null): Promise<void> {
    const request = { sessionId, ...wireEgress(egress) };
    await this.unary<Sandbox__Output>((md, options, cb) =>
      this.client.setEgress(request, md, options, cb),
    );
  }

  async getSandbox(sessionId: string): Promise<SandboxInfo> {
    return toSandboxInfo(
      await this.unary<Sandbox__Output>((md, options, cb) =>
        this.client.getSandbox({ sessionId }, md, options, cb),
      ),
    );
  }

  async destroySandbox(sessionId: string): Promise<boolean> {
    const response = await this.unary<DestroySandboxResponse__Output>((md, options, cb) =>
      this.client.destroySandbox({ sessionId }, md, options, cb),
    );
    return response.existed;
  }

  /**
   * Runs an execution, passing each event to `handlers` as it arrives. Resolves when the stream
   * ends; `signal` cancels the run (e.g. the HTTP client went away).
   */
  exec(
    request: ExecRequest,
    handlers: ExecHandlers,
    deadlineMs: number,
    signal: AbortSignal,
  ): Promise<void> {
    return new Promise((resolve, reject) => {
      const call = this.client.exec(request, this.metadata(), this.options(deadlineMs));
      const cancel = (): void => call.cancel();
      signal.addEventListener('abort', cancel, { once: true });
      const flow: FlowControl = { pause: () => call.pause(), resume: () => call.resume() };
      call.on('data', (message: ExecEvent__Output) => {
        const event = toExecEvent(message);
        if (event !== undefined) handlers.onEvent(event, flow);
      });
      call.on('error', (err) => {
        signal.removeEventListener('abort', cancel);
        reject(
          signal.aborted ? new AppError('request_timeout', 'Run cancelled') : fromGrpcError(err),
        );
      });
      call.on('end', () => {
        signal.removeEventListener('abort', cancel);
        resolve();
      });
    });
  }

  /**
   * Pauses the sandbox unless the node served a request of the session in the last
   * `unusedForMs` or serves one now; resolves with whether it paused it.
   */
  async pauseSandbox(sessionId: string, unusedForMs = 0): Promise<{ paused: boolean }> {
    const sandbox = await this.unary<Sandbox__Output>((md, options, cb) =>
      this.client.pauseSandbox({ sessionId, unusedForMs }, md, options, cb),
    );
    return { paused: sandbox.status === 'paused' };
  }

  /** Thaws a paused sandbox; survives an agent restarted under the call (a no-op twice). */
  async resumeSandbox(sessionId: string): Promise<void> {
    await this.surviving<Sandbox__Output>(
      (md, options, cb) => this.client.resumeSandbox({ sessionId }, md, options, cb),
      this.callTimeoutMs,
    );
  }

  /**
   * Saves the workspace and removes the sandbox; resolves with the count of files saved, or
   * `inUse` when the node served a request of the session in the last `unusedForMs` (or
   * serves one now) and changed nothing. Saving a large workspace takes time: this is no
   * user's request, so the deadline is long.
   */
  async hibernateSandbox(
    sessionId: string,
    { unusedForMs = 0, evacuate = false }: { unusedForMs?: number; evacuate?: boolean } = {},
  ): Promise<Hibernated> {
    const saved = await this.unary<HibernateResponse__Output>(
      (md, options, cb) =>
        this.client.hibernateSandbox({ sessionId, unusedForMs, evacuate }, md, options, cb),
      HIBERNATE_TIMEOUT_MS,
    );
    return { filesCount: saved.filesCount, inUse: saved.inUse, savedIn: saved.savedIn };
  }

  /**
   * Brings a deep-sleeping sandbox back from its saved workspace. A restore cut short converges
   * when asked again (the saved copy goes only once the new sandbox runs), so it survives an
   * agent restarted under the call.
   */
  async restoreSandbox({ egress, ...input }: SandboxRequest): Promise<void> {
    const request = { ...input, ...wireEgress(egress) };
    await this.surviving<Sandbox__Output>(
      (md, options, cb) => this.client.restoreSandbox(request, md, options, cb),
      this.fileTimeoutMs,
    );
  }

  /**
   * A terminal in the sandbox (no deadline: it lasts as long as its user). Its start, screen,
   * exit and failure go to `handlers`; the connection takes typed bytes and resizes, holds
   * the screen while paused, and hangs the program up when ended.
   */
  openTerminal(start: TerminalStartSpec, handlers: TerminalHandlers): TerminalConnection {
    const call = this.client.openTerminal(this.metadata());
    call.write({ start });
    call.on('data', (message: TerminalOutput__Output) => {
      if (message.started) handlers.started(message.started.pid);
      if (message.data) handlers.data(message.data);
      if (message.exited) handlers.exited(message.exited.exitCode);
    });
    call.on('end', () => handlers.ended());
    call.on('error', (err) => handlers.failed(fromGrpcError(err)));
    return {
      write: (data) => call.write({ data }),
      resize: (cols, rows) => call.write({ resize: { cols, rows } }),
      onceDrained: (resume) => call.once('drain', resume),
      pause: () => call.pause(),
      resume: () => call.resume(),
      end: () => call.end(),
    };
  }

  async listProcesses(sessionId: string): Promise<ProcessRecord[]> {
    const response = await this.unary<ListProcessesResponse__Output>((md, options, cb) =>
      this.client.listProcesses({ sessionId }, md, options, cb),
    );
    return response.processes.map(toProcessRecord);
  }

  /**
   * Reads a run's kept output from `from`: each event to `onEvent` (whose `flow` holds the
   * read at the reader's pace); with `follow`, until the run ended (`untilExit`: up to its
   * exit). No deadline while following: `signal` ends it.
   */
  readOutput(
    request: {
      sessionId: string;
      process: string;
      from: OutputPosition;
      follow: boolean;
      untilExit: boolean;
    },
    onEvent: (event: OutputEvent, flow: FlowControl) => void,
    signal: AbortSignal,
  ): Promise<void> {
    return new Promise((resolve, reject) => {
      const call = this.client.readOutput(
        request,
        this.metadata(),
        request.follow ? {} : this.options(this.fileTimeoutMs),
      );
      const cancel = (): void => call.cancel();
      signal.addEventListener('abort', cancel, { once: true });
      const flow: FlowControl = { pause: () => call.pause(), resume: () => call.resume() };
      call.on('data', (message: OutputEvent__Output) => {
        const event = toOutputEvent(message);
        if (event !== undefined) onEvent(event, flow);
      });
      call.on('error', (err) => {
        signal.removeEventListener('abort', cancel);
        reject(
          signal.aborted ? new AppError('request_timeout', 'Read cancelled') : fromGrpcError(err),
        );
      });
      call.on('end', () => {
        signal.removeEventListener('abort', cancel);
        resolve();
      });
    });
  }

  /** Writes to a run's stdin, the node waiting at most `waitMs` for the process to take it. */
  async writeStdin(input: {
    sessionId: string;
    process: string;
    data: Buffer;
    close: boolean;
    waitMs: number;
  }): Promise<{ written: number; complete: boolean }> {
    return this.unary<WriteStdinResponse__Output>(
      (md, options, cb) => this.client.writeStdin(input, md, options, cb),
      input.waitMs + this.callTimeoutMs,
    );
  }

  async killProcesses(sessionId: string, pid: number | undefined): Promise<number[]> {
    const response = await this.unary<KillProcessesResponse__Output>((md, options, cb) =>
      this.client.killProcesses({ sessionId, pid: pid ?? 0 }, md, options, cb),
    );
    return response.pids;
  }

  /** Writes a file atomically; resolves with its size. */
  async writeFile(sessionId: string, path: string, content: Buffer): Promise<{ size: number }> {
    const written = await this.unary<WriteFileResponse__Output>(
      (md, options, cb) => this.client.writeFile({ sessionId, path, content }, md, options, cb),
      this.fileTimeoutMs,
    );
    return { size: written.size };
  }

  /**
   * Opens a file: resolves with its size once the node has it open (a refusal before that
   * rejects; no answer within the file operation timeout is 408), and its bytes as a stream
   * that follows the reader's pace, for up to READ_STREAM_DEADLINE_MS. Destroying the stream
   * cancels the read.
   */
  openFile(sessionId: string, path: string): Promise<{ size: number; body: Readable }> {
    const call = this.client.readFile(
      { sessionId, path },
      this.metadata(),
      this.options(READ_STREAM_DEADLINE_MS),
    );
    let openTimedOut = false;
    const openTimer = setTimeout(() => {
      openTimedOut = true;
      call.cancel();
    }, this.fileTimeoutMs);
    return new Promise((resolve, reject) => {
      let body: Readable | undefined;
      call.on('data', (chunk: FileChunk__Output) => {
        if (body === undefined) {
          clearTimeout(openTimer);
          body = new Readable({
            read: () => call.resume(),
            destroy: (err, done) => {
              call.cancel(); // a no-op once the call has ended
              done(err);
            },
          });
          resolve({ size: chunk.size, body });
        } else if (!body.push(chunk.data)) {
          call.pause();
        }
      });
      call.on('end', () => {
        if (body === undefined) reject(new AppError('internal_error', 'The node sent no file'));
        else body.push(null);
      });
      call.on('error', (err: grpc.ServiceError) => {
        clearTimeout(openTimer);
        const failure = openTimedOut
          ? new AppError('request_timeout', 'The file could not be opened in time', { cause: err })
          : fromGrpcError(err);
        if (body === undefined) reject(failure);
        else body.destroy(failure);
      });
    });
  }

  async listFiles(
    sessionId: string,
    path: string,
    page: { offset: number; limit: number },
  ): Promise<FileListing> {
    return toFileListing(
      await this.unary<ListFilesResponse__Output>(
        (md, options, cb) => this.client.listFiles({ sessionId, path, ...page }, md, options, cb),
        this.fileTimeoutMs,
      ),
    );
  }

  close(): void {
    this.client.close();
  }
}
