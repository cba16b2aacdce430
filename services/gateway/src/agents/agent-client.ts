import type { Readable } from 'node:stream';
import * as grpc from '@grpc/grpc-js';
import {
  type AgentClient as GrpcAgentClient,
  type DestroySandboxResponse__Output,
  type ForkSandboxResponse__Output,
  type HibernateResponse__Output,
  type KillProcessesResponse__Output,
  type ContextsRequest,
  type ContextsResponse__Output,
  type ListFilesResponse__Output,
  type ListProcessesResponse__Output,
  type WriteFileResponse__Output,
  type WriteStdinResponse__Output,
  type RunSpec,
  type NodeInfo__Output,
  type Sandbox__Output,
} from '@sandbox/proto';
import type { EgressPolicy, FileListing } from '@sandbox/contract';
import { callMetadata, connectAgent, surviving, unaryCall, type UnaryCall } from './agent-channel';
import { AgentFiles } from './agent-files';
import { AgentSnapshots } from './agent-snapshots';
import { wireEgress, type SandboxRequest } from './sandbox-request';
import {
  toCodeContext,
  type CodeContextRecord,
  toFileListing,
  toNodeStatus,
  toProcessRecord,
  toSandboxInfo,
  type NodeStatus,
  type OutputEvent,
  type OutputPosition,
  type ProcessRecord,
  type SandboxInfo,
} from './agent-messages';
import {
  followExec,
  followOutput,
  openedFile,
  type ExecHandlers,
  type FlowControl,
} from './agent-streams';
import {
  startTerminal,
  type TerminalConnection,
  type TerminalHandlers,
  type TerminalStartSpec,
} from './terminal-call';

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
/** A snapshot packs, compresses and stores a whole workspace (up to the disk's size). */
const SNAPSHOT_TIMEOUT_MS = 5 * 60 * 1000;

/** What a deep sleep did (`inUse`: nothing, the session was in use), and where it saved. */
export interface Hibernated {
  filesCount: number;
  inUse: boolean;
  /** The blob store's id, or `node:<id>` for a disk kept on the node. */
  savedIn: string;
}

/** The gateway's view of one agent; every failure comes back as an AppError. */
export class AgentClient {
  readonly nodeId: string;
  private readonly client: GrpcAgentClient;
  private readonly token: string | undefined;
  private readonly callTimeoutMs: number;
  private readonly fileTimeoutMs: number;
  private previewAddressCache: Promise<string> | undefined;
  /** Stat, remove, rename and mkdir in the node's sandboxes. */
  readonly files: AgentFiles;
  /** Snapshots of sessions' workspaces in the node's blob store. */
  readonly snapshots: AgentSnapshots;

  constructor(options: AgentClientOptions) {
    this.nodeId = options.nodeId;
    this.token = options.token;
    this.callTimeoutMs = options.callTimeoutMs;
    this.fileTimeoutMs = options.fileTimeoutMs;
    this.client = connectAgent(options.address);
    this.files = new AgentFiles(
      this.client,
      (call) => this.unary(call, this.fileTimeoutMs),
      () => this.metadata(),
    );
    this.snapshots = new AgentSnapshots(this.client, (call) =>
      this.unary(call, SNAPSHOT_TIMEOUT_MS),
    );
  }

  /** The token, and the id of the request this call serves (the agent logs under it). */
  private metadata(): grpc.Metadata {
    return callMetadata(this.token);
  }

  private options(timeoutMs = this.callTimeoutMs): grpc.CallOptions {
    return { deadline: new Date(Date.now() + timeoutMs) };
  }

  /** A unary call, with the token, the request's id and a deadline of `timeoutMs`. */
  private unary<Res>(call: UnaryCall<Res>, timeoutMs = this.callTimeoutMs): Promise<Res> {
    return unaryCall(
      call,
      () => this.metadata(),
      () => this.options(timeoutMs),
    );
  }

  /** `surviving` (agent-channel.ts): a unary call made again when the node comes back. */
  private surviving<Res>(call: UnaryCall<Res>, timeoutMs: number): Promise<Res> {
    return surviving(this.client, () => this.unary(call, timeoutMs));
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

  /** Forks of a session on its node (ADR 43), one per request, all or none (as a create). */
  async forkSandbox(
    sourceSessionId: string,
    forks: readonly SandboxRequest[],
    processes: boolean,
  ): Promise<{ processesKept: boolean }> {
    const wire = forks.map(({ egress, ...input }) => ({ ...input, ...wireEgress(egress) }));
    const request = { sourceSessionId, forks: wire, processes };
    const response = await this.unary<ForkSandboxResponse__Output>((md, options, cb) =>
      this.client.forkSandbox(request, md, options, cb),
    );
    return { processesKept: response.processesKept };
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
    request: RunSpec,
    handlers: ExecHandlers,
    deadlineMs: number,
    signal: AbortSignal,
  ): Promise<void> {
    return followExec(
      () => this.client.exec(request, this.metadata(), this.options(deadlineMs)),
      handlers,
      signal,
    );
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
    return startTerminal(this.client.openTerminal(this.metadata()), start, handlers);
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
    return followOutput(
      () =>
        this.client.readOutput(
          request,
          this.metadata(),
          request.follow ? {} : this.options(this.fileTimeoutMs),
        ),
      onEvent,
      signal,
    );
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
    return openedFile(call, this.fileTimeoutMs);
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

  /** The session's code contexts (ADR 42): the one acted on, or all (none for delete). */
  async manageContexts(request: ContextsRequest): Promise<CodeContextRecord[]> {
    const response = await this.unary<ContextsResponse__Output>(
      (md, options, cb) => this.client.manageContexts(request, md, options, cb),
      this.fileTimeoutMs,
    );
    return response.contexts.map(toCodeContext);
  }

  close(): void {
    this.client.close();
  }
}
