import { InvalidRequestError, NetworkError, ProcessNotFoundError } from './errors.js';
import { base64 } from './files.js';
import type { HttpClient } from './http.js';
import {
  ProcessHandle,
  type OutputOptions,
  type ProcessCallOptions,
  type ProcessCalls,
  type ProcessRef,
} from './process-handle.js';
import { eventData, RunStream } from './run-stream.js';
import { SessionCollection } from './session-collection.js';
import { resumingEvents } from './sse.js';
import type { KillResult, OutputEvent, ProcessInfo, ProcessOutput, StdinResult } from './types.js';

export type { OutputOptions, ProcessCallOptions, ProcessRef } from './process-handle.js';

/** How often a dropped follow is resumed before the failure is thrown. */
const MAX_RESUMES = 5;

/**
 * A session's runs: their list and state, their kept output (after the connection that
 * streamed it dropped, after idle and deep sleep), their stdin, and killing them.
 */
export class Processes extends SessionCollection implements ProcessCalls {
  /** @internal Made by `Sandbox`; use `sandbox.processes`. */
  constructor(http: HttpClient, sessionId: string) {
    super(http, sessionId, 'processes');
  }

  /** The session's runs, oldest first (does not wake the session). */
  async list(options: ProcessCallOptions = {}): Promise<ProcessInfo[]> {
    return (await this.read<{ processes: ProcessInfo[] }>(this.path(), options)).processes;
  }

  get(ref: ProcessRef, options: ProcessCallOptions = {}): Promise<ProcessInfo> {
    return this.read<ProcessInfo>(this.path(ref), options);
  }

  /**
   * A handle on a run of the session, running or ended (by its pid or `proc_` id): wait for
   * it, follow its output, write to its stdin, kill it. Throws ProcessNotFoundError.
   */
  async connect(ref: ProcessRef, options: ProcessCallOptions = {}): Promise<ProcessHandle> {
    const info = await this.get(ref, options);
    return new ProcessHandle(info, {
      calls: this,
      newStream: () => new RunStream(this.http, this.sessionId),
    });
  }

  /** A run's kept output from the given offsets (default: all that is kept), as text. */
  output(ref: ProcessRef, options: OutputOptions = {}): Promise<ProcessOutput> {
    return this.http.json<ProcessOutput>({
      method: 'GET',
      path: this.path(ref, '/output'),
      query: { stdoutOffset: options.stdoutOffset, stderrOffset: options.stderrOffset },
      signal: options.signal,
      retry: 'safe',
    });
  }

  /**
   * A run's output as it comes, from its start (or the given offsets), until the run and what
   * it left running let go of its pipes (`end`). A dropped connection is resumed where it
   * stopped. Leaving the loop early ends the read (never the run).
   */
  async *follow(
    ref: ProcessRef,
    options: OutputOptions = {},
  ): AsyncGenerator<OutputEvent, void, undefined> {
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.signal?.aborted === true) onAbort();
    const open = async (lastEventId: string | undefined): Promise<Response | undefined> => {
      const response = await this.http.send({
        method: 'GET',
        path: this.path(ref, '/output'),
        query:
          lastEventId === undefined
            ? { stdoutOffset: options.stdoutOffset, stderrOffset: options.stderrOffset }
            : {},
        headers: {
          accept: 'text/event-stream',
          ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }),
        },
        signal: controller.signal,
        retry: 'safe',
        stream: true,
      });
      return response.status === 204 ? undefined : response;
    };
    const exhausted = (): NetworkError =>
      new NetworkError({
        code: 'network_error',
        status: 0,
        message: `The output stream kept dropping (${MAX_RESUMES} reconnects)`,
      });
    try {
      for await (const message of resumingEvents(open, {
        maxResumes: MAX_RESUMES,
        aborted: () => controller.signal.aborted,
        exhausted,
      })) {
        const data = eventData(message);
        if (message.event === 'stdout' || message.event === 'stderr') {
          yield { type: message.event, data: data.data as string };
        } else if (message.event === 'gap') {
          yield { type: 'gap', stdout: data.stdout as number, stderr: data.stderr as number };
        } else if (message.event === 'end') {
          yield { type: 'end', process: data as unknown as ProcessInfo };
          return;
        }
      }
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
      controller.abort();
    }
  }

  /**
   * Writes to the stdin of a run started with `stdin: true` (and/or closes it): resolves once
   * the process took every byte (it may hold a writer back; after 30 s the call fails with
   * what it took, and the rest is not written).
   */
  writeStdin(
    ref: ProcessRef,
    data: string | Uint8Array,
    options: ProcessCallOptions & { close?: boolean } = {},
  ): Promise<StdinResult> {
    const body =
      typeof data === 'string' ? { data } : { data: base64(data), encoding: 'base64' as const };
    return this.stdin(
      ref,
      { ...body, ...(options.close === true ? { close: true } : {}) },
      options,
    );
  }

  /** Closes the stdin of a run: it reads the end of its input. */
  closeStdin(ref: ProcessRef, options: ProcessCallOptions = {}): Promise<StdinResult> {
    return this.stdin(ref, { close: true }, options);
  }

  /** A write to a run's stdin, never sent twice (the process may have taken the bytes). */
  private stdin(
    ref: ProcessRef,
    json: Record<string, unknown>,
    options: ProcessCallOptions,
  ): Promise<StdinResult> {
    return this.http.json<StdinResult>({
      method: 'POST',
      path: this.path(ref, '/stdin'),
      json,
      signal: options.signal,
      retry: 'refused',
    });
  }

  /**
   * Kills one process and its descendants: a pid (any process of the session; one that is
   * not: ProcessNotFoundError), or a run's `proc_` id (a run that has ended: `killed: 0`).
   * To kill every process of the session, `killAll()`.
   */
  kill(pidOrId: ProcessRef, options?: ProcessCallOptions): Promise<KillResult>;
  /**
   * @deprecated `kill()` without a pid killed every process of the session; it now throws
   * InvalidRequestError. Use `killAll()`.
   */
  kill(pid?: number, options?: ProcessCallOptions): Promise<KillResult>;
  async kill(pidOrId: ProcessRef | undefined, options: ProcessCallOptions = {}) {
    if (typeof pidOrId === 'number') return this.killPid(pidOrId, options);
    if (typeof pidOrId !== 'string' || !/^proc_[a-f0-9]+$/.test(pidOrId)) {
      throw new InvalidRequestError({
        code: 'invalid_request',
        status: 0,
        message:
          pidOrId === undefined
            ? 'kill() takes a pid or a proc_ id; to kill every process, killAll()'
            : `Not a pid or a proc_ id: ${String(pidOrId)}`,
        details: { field: 'pid' },
      });
    }
    const run = await this.get(pidOrId, options);
    // Its pid names another process once it ended (a deep sleep numbers them again).
    if (run.state !== 'running') return { killed: 0, pids: [] };
    try {
      return await this.killPid(run.pid, options);
    } catch (err) {
      if (err instanceof ProcessNotFoundError) return { killed: 0, pids: [] }; // just ended
      throw err;
    }
  }

  /** Kills every process of the session (runs and what they left in the background). */
  killAll(options: ProcessCallOptions = {}): Promise<KillResult> {
    return this.killPid(undefined, options);
  }

  /** Kills `pid` and its descendants; without one, every process of the session. */
  private killPid(pid: number | undefined, options: ProcessCallOptions): Promise<KillResult> {
    return this.http.json<KillResult>({
      method: 'POST',
      path: '/execution/kill',
      json: { sessionId: this.sessionId, ...(pid === undefined ? {} : { pid }) },
      signal: options.signal,
      retry: 'safe',
    });
  }
}
